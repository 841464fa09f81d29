//! `mcubench calibrate`: fits the free parameters of a cycle model (a board timing profile, or
//! a core alone) to cycles measured on a real board, so that a team with one board can keep
//! every later pull request board-free.
//!
//! Input: rows of measured cycles (a YAML or CSV file; format in
//! `docs/src/reference/calibrate.md`), each naming what ran (a scenario cell, or an ELF on a
//! board), what was measured (a KAT operation or a function region) and the cycles read from
//! DWT CYCCNT on the board. Each distinct cell runs under QEMU once per candidate parameter set
//! (memoized), exactly as `mcubench run` would run it with that model.
//!
//! The fit: least squares over the rows' relative errors over integer grids: every point when
//! the grid is small (at most 256 points), else coordinate descent (each free parameter swept
//! in turn, coarse then fine, until no sweep improves); strict improvement only, grids
//! ascending, so it is deterministic. Leave-one-out: each row is
//! predicted by a fit to the other rows. Few free parameters on purpose (see [`Free`]); fewer
//! rows than free parameters is refused.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::board::Board;
use crate::config::regions::RegionSpec;
use crate::config::rules::ExitRule;
use crate::config::scenario::Scenario;
use crate::config::timing::{CycleModel, FlashSettings, ModelSettings, ProfileName, TimingProfile};
use crate::exec::scratch::ScratchDir;
use crate::judge::verdict::Outcome;
use crate::replay::{ModelArgs, Traced, replay};
use crate::report::{CounterInterval, RegionReport};
use crate::{Error, RunOptions, run_scenario};
use mcubench_wire::Results;

/// The parameters calibration may fit. Chosen because each has a physical meaning a board
/// measurement pins down and a small integer range: the taken-branch refill P (the TRM's "1 to
/// 3"), the effective flash wait states (what the flash costs once buffers and caches are
/// accounted for), the divide estimate (SDIV/UDIV 2-12, operand-dependent), and the Cortex-M7's
/// misprediction penalty (measured 6 to 8 on one STM32H7) and the global history its predictor
/// uses (inferred).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Free {
    BranchRefill,
    FlashWaitStates,
    Divide,
    M7Mispredict,
    M7History,
}

impl Free {
    pub const ALL: [Free; 5] =
        [Free::BranchRefill, Free::FlashWaitStates, Free::Divide, Free::M7Mispredict, Free::M7History];

    pub fn name(self) -> &'static str {
        match self {
            Free::BranchRefill => "branch-refill",
            Free::FlashWaitStates => "flash.wait-states",
            Free::Divide => "divide",
            Free::M7Mispredict => "m7-mispredict",
            Free::M7History => "m7-history",
        }
    }

    pub fn parse(name: &str) -> Result<Free, String> {
        Free::ALL.into_iter().find(|f| f.name() == name.trim()).ok_or_else(|| {
            format!("`{name}` cannot be fitted; free parameters are {}", Free::ALL.map(Free::name).join(", "))
        })
    }

    /// The value in a resolved model.
    fn value(self, m: &CycleModel) -> Option<u32> {
        match self {
            Free::BranchRefill => Some(m.params.branch_refill),
            Free::Divide => Some(m.params.divide),
            Free::M7Mispredict => Some(m.params.m7_mispredict),
            Free::M7History => Some(m.params.m7_history),
            Free::FlashWaitStates => m.memory.flash.first().map(|f| f.wait_states),
        }
    }

    /// The lowest value the core's documentation allows (the TRMs' P of 1 to 3); 0 where 0 is
    /// physical (no wait states, no misprediction).
    fn documented_min(self) -> u32 {
        match self {
            Free::BranchRefill => 1,
            Free::Divide => 2,
            Free::FlashWaitStates | Free::M7Mispredict | Free::M7History => 0,
        }
    }

    /// The values searched, given the base value.
    fn range(self, base: u32) -> (u32, u32) {
        match self {
            Free::BranchRefill => (0, 3),
            Free::Divide => (2, 12),
            Free::M7Mispredict | Free::M7History => (0, 16),
            Free::FlashWaitStates => (0, (2 * base + 4).max(8)),
        }
    }

    fn apply(self, s: &mut ModelSettings, v: u32) {
        match self {
            Free::BranchRefill => {
                s.params.insert("branch-refill".into(), v.to_string());
            }
            Free::Divide => {
                s.params.insert("divide".into(), v.to_string());
            }
            Free::M7Mispredict => {
                s.params.insert("m7-mispredict".into(), v.to_string());
            }
            Free::M7History => {
                s.params.insert("m7-history".into(), v.to_string());
            }
            Free::FlashWaitStates => {
                let f = s.flash.get_or_insert_with(FlashSettings::default);
                f.wait_states = Some(v);
            }
        }
    }
}

/// What runs: a cell of a scenario file, or an ELF on a board.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    Scenario(PathBuf),
    Elf(PathBuf),
}

/// What was measured in that run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Measured {
    /// A KAT operation by id (between its region markers).
    Kat(String),
    /// A function region by name: cycles per call (the mean over its calls).
    Region(String),
    /// What the firmware's own DWT cycle-counter difference between two reads measured: the
    /// accessing instructions as the report names them (`bench#1`, which a rebuild keeps, or
    /// `bench+0x12`) or by address (`0x1a2`); the mean over the times that pair ran. The first
    /// may be a write of the counter (`DWT->CYCCNT = 0`).
    Reads(String, String),
}

/// One measured row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Where it was written: `file:line` (CSV) or `file: rows[i]` (YAML).
    pub at: String,
    pub source: Source,
    pub board: String,
    /// The scenario's build profile (cell); `None`: the scenario's only one.
    pub profile: Option<String>,
    pub measured: Measured,
    /// Cycles read on the board (DWT CYCCNT).
    pub cycles: u64,
    /// How an `elf` row's run ends (`exit: loop` for firmware built for a board); `None`: by
    /// exiting 0, or as the protocol says.
    pub exit: Option<ExitRule>,
}

impl Row {
    fn label(&self) -> String {
        let what = match &self.measured {
            Measured::Kat(k) => format!("kat {k}"),
            Measured::Region(r) => format!("region {r}"),
            Measured::Reads(a, b) => format!("reads {a} → {b}"),
        };
        let source = match &self.source {
            Source::Scenario(p) | Source::Elf(p) => p.file_name().map_or(String::new(), |n| n.to_string_lossy().into()),
        };
        match &self.profile {
            Some(p) => format!("{source} {}/{p} {what}", self.board),
            None => format!("{source} {} {what}", self.board),
        }
    }
}

/// A calibration: the base model, what is free, the rows.
#[derive(Debug, Clone)]
pub struct Calibration {
    pub file: PathBuf,
    pub timing: Option<&'static TimingProfile>,
    /// Fixed settings on top of the profile.
    pub model: ModelSettings,
    pub free: Vec<Free>,
    pub rows: Vec<Row>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCalibration {
    timing: Option<ProfileName>,
    #[serde(default)]
    model: ModelSettings,
    #[serde(default)]
    free: Vec<String>,
    rows: Vec<RawRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRow {
    scenario: Option<PathBuf>,
    elf: Option<PathBuf>,
    board: String,
    profile: Option<String>,
    kat: Option<String>,
    region: Option<String>,
    reads: Option<[String; 2]>,
    cycles: u64,
    exit: Option<ExitRule>,
}

/// The header a CSV file starts with.
pub const CSV_HEADER: &str = "source,board,profile,measure,cycles";

impl Calibration {
    /// Reads a calibration file: YAML (`.yaml`, `.yml`) or CSV (anything else). Relative paths
    /// are relative to the file's directory. `timing` and `free` (command-line flags) replace
    /// the file's.
    pub fn load(path: &Path, timing: Option<&str>, free: Option<&[String]>) -> Result<Calibration, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Input(format!("{}: cannot read the calibration file: {e}", path.display())))?;
        let yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
        let mut c = if yaml { Self::from_yaml(path, &text)? } else { Self::from_csv(path, &text)? };
        if let Some(name) = timing {
            c.timing = Some(TimingProfile::find(name).ok_or_else(|| {
                Error::Input(format!(
                    "--timing {name}: no such board timing profile; known: {}",
                    TimingProfile::names().join(", ")
                ))
            })?);
        }
        if let Some(free) = free {
            c.free = free.iter().map(|f| Free::parse(f)).collect::<Result<_, _>>().map_err(Error::Input)?;
        }
        if c.free.is_empty() {
            c.free = vec![Free::BranchRefill];
            if c.timing.is_some_and(|t| t.model.flash.is_some()) || c.model.flash.is_some() {
                c.free.push(Free::FlashWaitStates);
            }
        }
        c.check()?;
        Ok(c)
    }

    fn base(path: &Path) -> PathBuf {
        path.parent().unwrap_or(Path::new(".")).to_path_buf()
    }

    pub fn from_yaml(path: &Path, text: &str) -> Result<Calibration, Error> {
        let raw: RawCalibration =
            serde_yaml_ng::from_str(text).map_err(|e| Error::Input(format!("{}: {e}", path.display())))?;
        let base = Self::base(path);
        let mut rows = Vec::new();
        for (i, r) in raw.rows.into_iter().enumerate() {
            let at = format!("{}: rows[{i}]", path.display());
            let source = match (r.scenario, r.elf) {
                (Some(_), None) if r.exit.is_some() => {
                    return Err(Error::Input(format!(
                        "{at}: `exit` is for `elf` rows; a scenario says how its run ends in `verdict.exit`"
                    )));
                }
                (Some(s), None) => Source::Scenario(base.join(s)),
                (None, Some(e)) => Source::Elf(base.join(e)),
                _ => return Err(Error::Input(format!("{at}: give exactly one of `scenario` or `elf`"))),
            };
            let measured = match (r.kat, r.region, r.reads) {
                (Some(k), None, None) => Measured::Kat(k),
                (None, Some(f), None) => Measured::Region(f),
                (None, None, Some([a, b])) => Measured::Reads(a, b),
                _ => return Err(Error::Input(format!("{at}: give exactly one of `kat`, `region` or `reads`"))),
            };
            let (board, profile, cycles, exit) = (r.board, r.profile, r.cycles, r.exit);
            rows.push(Row { at, source, board, profile, measured, cycles, exit });
        }
        let free = raw
            .free
            .iter()
            .map(|f| Free::parse(f))
            .collect::<Result<_, _>>()
            .map_err(|e| Error::Input(format!("{}: free: {e}", path.display())))?;
        Ok(Calibration { file: path.to_owned(), timing: raw.timing.map(|p| p.0), model: raw.model, free, rows })
    }

    /// CSV: the header [`CSV_HEADER`], then one row per line: a scenario file (`.yaml`/`.yml`)
    /// or an ELF, the board, the build profile (empty: the only one), `kat:<id>`,
    /// `region:<function>` or `reads:<from>..<to>`, the cycles. `#` starts a comment line; no quoting (no commas in
    /// fields).
    pub fn from_csv(path: &Path, text: &str) -> Result<Calibration, Error> {
        let base = Self::base(path);
        let mut rows = Vec::new();
        let mut header = false;
        for (n, line) in text.lines().enumerate() {
            let at = format!("{}:{}", path.display(), n + 1);
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if !header {
                if line.replace(' ', "") != CSV_HEADER {
                    return Err(Error::Input(format!("{at}: the first line must be the header `{CSV_HEADER}`")));
                }
                header = true;
                continue;
            }
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            if f.len() != 5 {
                return Err(Error::Input(format!("{at}: {} fields, the header has 5 ({CSV_HEADER})", f.len())));
            }
            let source = if f[0].ends_with(".yaml") || f[0].ends_with(".yml") {
                Source::Scenario(base.join(f[0]))
            } else {
                Source::Elf(base.join(f[0]))
            };
            let measured = match f[3].split_once(':') {
                Some(("kat", id)) if !id.is_empty() => Measured::Kat(id.to_string()),
                Some(("region", name)) if !name.is_empty() => Measured::Region(name.to_string()),
                Some(("reads", pair))
                    if let Some((a, b)) = pair.split_once("..")
                        && !a.is_empty()
                        && !b.is_empty() =>
                {
                    Measured::Reads(a.to_string(), b.to_string())
                }
                _ => {
                    return Err(Error::Input(format!(
                        "{at}: measure `{}` is not `kat:<id>`, `region:<function>` or `reads:<from>..<to>`",
                        f[3]
                    )));
                }
            };
            let cycles =
                f[4].parse().map_err(|_| Error::Input(format!("{at}: cycles `{}` is not a whole number", f[4])))?;
            rows.push(Row {
                at,
                source,
                board: f[1].to_string(),
                profile: (!f[2].is_empty()).then(|| f[2].to_string()),
                measured,
                cycles,
                exit: None,
            });
        }
        if !header {
            return Err(Error::Input(format!("{}: empty; the first line must be `{CSV_HEADER}`", path.display())));
        }
        Ok(Calibration { file: path.to_owned(), timing: None, model: ModelSettings::default(), free: Vec::new(), rows })
    }

    /// Refuses what cannot be fitted: fewer rows than free parameters, zero cycles, a free
    /// parameter twice.
    fn check(&self) -> Result<(), Error> {
        let file = self.file.display();
        for (i, f) in self.free.iter().enumerate() {
            if self.free[..i].contains(f) {
                return Err(Error::Input(format!("{file}: free: `{}` listed twice", f.name())));
            }
        }
        if self.rows.len() < self.free.len() {
            return Err(Error::Input(format!(
                "{file}: {} measured row(s) cannot fit {} free parameter(s) ({}); give at least {} rows (one more for a \
                 leave-one-out error), or fewer free parameters",
                self.rows.len(),
                self.free.len(),
                self.free.iter().map(|f| f.name()).collect::<Vec<_>>().join(", "),
                self.free.len()
            )));
        }
        if let Some(r) = self.rows.iter().find(|r| r.cycles == 0) {
            return Err(Error::Input(format!("{}: 0 measured cycles; give the DWT CYCCNT difference", r.at)));
        }
        Ok(())
    }
}

/// The cell a row runs in.
type CellKey = (Source, String, Option<String>);

/// A row with its base, fitted and leave-one-out estimates.
pub type FittedRow = (Row, u64, u64, Option<u64>);

/// The result of a calibration.
#[derive(Debug, Clone)]
pub struct Fitted {
    pub free: Vec<Free>,
    pub base_values: Vec<u32>,
    pub values: Vec<u32>,
    /// The range each free parameter was searched over.
    pub ranges: Vec<(u32, u32)>,
    /// Per row: measured, base estimate, fitted estimate, leave-one-out estimate (`None` with
    /// as many rows as free parameters).
    pub rows: Vec<FittedRow>,
    /// Paste-ready YAML: `timing:` and `model:`.
    pub profile_yaml: String,
    /// Distinct parameter sets priced.
    pub evaluations: usize,
    /// QEMU runs (one per cell when replaying traces; one per cell and parameter set live).
    pub qemu_runs: usize,
}

fn percent(est: u64, measured: u64) -> f64 {
    100.0 * (est as f64 - measured as f64) / measured as f64
}

fn median_max(mut v: Vec<f64>) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    let median = if v.len() % 2 == 1 { v[mid] } else { (v[mid - 1] + v[mid]) / 2.0 };
    (median, v[v.len() - 1])
}

impl Fitted {
    /// The report `mcubench calibrate` prints.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let names: Vec<&str> = self.free.iter().map(|f| f.name()).collect();
        let pairs = |v: &[u32]| names.iter().zip(v).map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join(", ");
        let _ = writeln!(
            out,
            "calibrated {} free parameter(s) ({}) on {} measured row(s): {} parameter sets priced, {} QEMU runs",
            self.free.len(),
            names.join(", "),
            self.rows.len(),
            self.evaluations,
            self.qemu_runs
        );
        let _ = writeln!(out, "base:   {}", pairs(&self.base_values));
        let _ = writeln!(out, "fitted: {}", pairs(&self.values));
        // A best value at the top of its search may only have stopped there: the rows may want
        // more, so it stands in for something the model misses. Below the core's documented
        // range (a refill of 0), the board is faster than the model.
        for ((f, v), (_, hi)) in self.free.iter().zip(&self.values).zip(&self.ranges) {
            let name = f.name();
            if v == hi {
                let _ = writeln!(
                    out,
                    "note: {name}={v} is the top of the range searched: the rows may want more, so the model misses \
                     something they measure; check the board's clock, wait states and caches, and what each row measures"
                );
            } else if *v < f.documented_min() {
                let _ = writeln!(
                    out,
                    "note: {name}={v} is below the core's documented minimum ({}): the board runs these rows faster \
                     than the model; check the board's clock and what each row measures",
                    f.documented_min()
                );
            }
        }
        out.push('\n');
        let _ = writeln!(out, "fitted profile (paste into the scenario):\n");
        out.push_str(&self.profile_yaml);
        let mut table = vec![
            ["row", "measured", "base est.", "err", "fitted est.", "err", "LOO est.", "LOO err"]
                .map(String::from)
                .to_vec(),
        ];
        for (row, base, fit, loo) in &self.rows {
            table.push(vec![
                row.label(),
                row.cycles.to_string(),
                base.to_string(),
                format!("{:+.2} %", percent(*base, row.cycles)),
                fit.to_string(),
                format!("{:+.2} %", percent(*fit, row.cycles)),
                loo.map_or("-".into(), |l| l.to_string()),
                loo.map_or("-".into(), |l| format!("{:+.2} %", percent(l, row.cycles))),
            ]);
        }
        let _ = writeln!(out, "\nper-row residuals (estimate - measured) / measured:");
        out.push_str(&crate::report::render(&table, 1));
        let abs = |f: &dyn Fn(&FittedRow) -> Option<u64>| -> Vec<f64> {
            self.rows.iter().filter_map(|r| f(r).map(|e| percent(e, r.0.cycles).abs())).collect()
        };
        let (bm, bx) = median_max(abs(&|r| Some(r.1)));
        let (fm, fx) = median_max(abs(&|r| Some(r.2)));
        let _ = writeln!(out, "\n|error| base:   median {bm:.2} %, max {bx:.2} %");
        let _ = writeln!(out, "|error| fitted: median {fm:.2} %, max {fx:.2} %");
        if self.rows.iter().all(|r| r.3.is_some()) {
            let (lm, lx) = median_max(abs(&|r| r.3));
            let _ = writeln!(out, "|error| leave-one-out: median {lm:.2} %, max {lx:.2} %");
        } else {
            let _ =
                writeln!(out, "leave-one-out: needs {} rows (one more than the free parameters)", self.free.len() + 1);
        }
        out
    }
}

/// How the evaluator prices a parameter set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pricing {
    /// Each cell runs under QEMU once, with its run trace; every parameter set is priced by
    /// replaying the traces ([`crate::replay`]), which gives exactly what a live run would.
    Replay,
    /// Each cell runs under QEMU once per parameter set (slow; for checking and benchmarks).
    Live,
}

/// A cell: its one-cell scenario, board and build profile.
type CellRun = (Scenario, &'static Board, String);

/// Prices rows with candidate parameters, remembering every estimate.
struct Evaluator<'a> {
    c: &'a Calibration,
    cells: BTreeMap<CellKey, CellRun>,
    memo: BTreeMap<Vec<u32>, Vec<u64>>,
    options: RunOptions,
    pricing: Pricing,
    /// The traced run of each cell ([`Pricing::Replay`], after the first evaluation).
    traced: BTreeMap<CellKey, Traced>,
    /// Where the traces are (removed with the evaluator).
    scratch: Option<ScratchDir>,
    /// QEMU runs so far.
    runs: usize,
}

impl<'a> Evaluator<'a> {
    fn new(c: &'a Calibration, options: RunOptions, pricing: Pricing) -> Result<Evaluator<'a>, Error> {
        let mut cells: BTreeMap<CellKey, CellRun> = BTreeMap::new();
        for row in &c.rows {
            let key = (row.source.clone(), row.board.clone(), row.profile.clone());
            if !cells.contains_key(&key) {
                let (mut scenario, board, profile) = cell_scenario(c, row)?;
                scenario.boards.retain(|b| b.name == board.name);
                scenario.profiles.retain(|p| p.name == profile);
                cells.insert(key.clone(), (scenario, board, profile));
            }
            if let Measured::Region(name) = &row.measured {
                let cell = cells.get_mut(&key).expect("inserted above");
                if !cell.0.regions.iter().any(|r| &r.name == name) {
                    cell.0.regions.push(RegionSpec::named(name));
                }
            }
        }
        Ok(Evaluator {
            c,
            cells,
            memo: BTreeMap::new(),
            options,
            pricing,
            traced: BTreeMap::new(),
            scratch: None,
            runs: 0,
        })
    }

    fn settings(&self, values: &[u32]) -> ModelSettings {
        let mut s = self.c.model.clone();
        for (f, v) in self.c.free.iter().zip(values) {
            f.apply(&mut s, *v);
        }
        s
    }

    fn model(&self, board: &Board, settings: &ModelSettings) -> Result<CycleModel, Error> {
        CycleModel::resolve(board, self.c.timing, settings)
            .map_err(|e| Error::Input(format!("{}: {e}", self.c.file.display())))
    }

    /// Runs every cell under QEMU with `settings` (traced into `trace`, if given); the cells'
    /// reports by key.
    fn run_cells(
        &mut self,
        settings: &ModelSettings,
        trace: Option<&Path>,
    ) -> Result<BTreeMap<CellKey, crate::report::CellReport>, Error> {
        let models: Vec<CycleModel> =
            self.cells.values().map(|(_, board, _)| self.model(board, settings)).collect::<Result<_, _>>()?;
        let mut work = Vec::new();
        for (k, ((key, (scenario, board, profile)), model)) in self.cells.iter_mut().zip(models).enumerate() {
            if let Some(m) = scenario.measures.get_mut(profile.as_str()) {
                m.models.insert(board.name.to_string(), model);
                m.wait_states.clear();
            }
            // One cell per run, `jobs` runs at once.
            let mut options = RunOptions { jobs: 1, ..self.options.clone() };
            if let Some(dir) = trace {
                // One directory per cell: every one-cell scenario's cell is number 0.
                options.trace = Some(dir.join(k.to_string()));
            }
            work.push((key.clone(), &*scenario, *board, options));
        }
        let reports =
            in_parallel(self.options.jobs, &work, |(_, scenario, _, options)| run_scenario(scenario, options));
        self.runs += work.len();
        let mut by_cell = BTreeMap::new();
        for ((key, scenario, board, _), report) in work.iter().zip(reports) {
            let cell = report.cells.into_iter().next().ok_or_else(|| Error::Run("a cell did not run".into()))?;
            if cell.verdict.outcome != Outcome::Pass {
                return Err(Error::Run(format!(
                    "{} on {} did not pass ({}: {}); calibrate only from runs that pass",
                    scenario.source.display(),
                    board.name,
                    cell.verdict.outcome.label(),
                    cell.verdict.message
                )));
            }
            by_cell.insert(key.clone(), cell);
        }
        Ok(by_cell)
    }

    /// Every row's estimate with the free parameters at `values`.
    fn estimates(&mut self, values: &[u32]) -> Result<Vec<u64>, Error> {
        if let Some(e) = self.memo.get(values) {
            return Ok(e.clone());
        }
        let settings = self.settings(values);
        let out = match self.pricing {
            Pricing::Live => {
                let by_cell = self.run_cells(&settings, None)?;
                self.c.rows.iter().map(|row| live_estimate(row, &by_cell[&key_of(row)])).collect::<Result<_, _>>()?
            }
            Pricing::Replay if self.traced.is_empty() => {
                // The first parameter set: every cell runs once, traced; its live estimates are
                // the replay's check (a replay with the traced parameters must give them exactly).
                let scratch = ScratchDir::new()
                    .map_err(|e| Error::Run(format!("cannot create a scratch directory for run traces: {e}")))?;
                let by_cell = self.run_cells(&settings, Some(scratch.path()))?;
                self.scratch = Some(scratch);
                for (key, cell) in &by_cell {
                    let traced = cell.traced.clone().ok_or_else(|| {
                        Error::Run(format!("{}: the run left no trace (the QEMU plugin is needed)", key.1))
                    })?;
                    self.traced.insert(key.clone(), traced);
                }
                let live: Vec<u64> = self
                    .c
                    .rows
                    .iter()
                    .map(|row| live_estimate(row, &by_cell[&key_of(row)]))
                    .collect::<Result<_, _>>()?;
                let replayed = self.replay(&settings)?;
                if let Some(i) = (0..live.len()).find(|&i| live[i] != replayed[i]) {
                    return Err(Error::Run(format!(
                        "{}: the replay of the run trace gives {} cycles, the live run {}; this is a bug in \
                         mcubench (calibrate with --live meanwhile)",
                        self.c.rows[i].at, replayed[i], live[i]
                    )));
                }
                live
            }
            Pricing::Replay => self.replay(&settings)?,
        };
        self.memo.insert(values.to_vec(), out.clone());
        Ok(out)
    }

    /// Every row's estimate with `settings`, from the traced runs (cells replayed in parallel,
    /// `options.jobs` at a time).
    fn replay(&self, settings: &ModelSettings) -> Result<Vec<u64>, Error> {
        let mut jobs: Vec<(&CellKey, &CellRun, &Traced, ModelArgs)> = Vec::new();
        for (key, cell) in &self.cells {
            // The cell's scenario with this model, as run_cells would run it.
            let mut scenario = cell.0.clone();
            if let Some(m) = scenario.measures.get_mut(cell.2.as_str()) {
                m.models.insert(cell.1.name.to_string(), self.model(cell.1, settings)?);
                m.wait_states.clear();
            }
            let args = ModelArgs::for_cell(&scenario, cell.1, &cell.2);
            jobs.push((key, cell, &self.traced[key], args));
        }
        let results = in_parallel(self.options.jobs, &jobs, |(_, _, traced, args)| {
            std::fs::read(&traced.trace)
                .map_err(|e| format!("cannot read {}: {e}", traced.trace.display()))
                .and_then(|data| replay(&data, traced.handlers, args, &traced.results))
                .map_err(|e| format!("{}: {e}", traced.trace.display()))
        });
        let mut by_cell = BTreeMap::new();
        for ((key, cell, traced, _), r) in jobs.iter().zip(results) {
            let r = r.map_err(Error::Run)?;
            by_cell.insert((*key).clone(), (*cell, *traced, r));
        }
        self.c
            .rows
            .iter()
            .map(|row| {
                let (cell, traced, r) = &by_cell[&key_of(row)];
                replayed_estimate(row, cell, traced, r)
            })
            .collect()
    }

    /// Sum of squared relative errors over `rows`.
    fn cost(&mut self, values: &[u32], rows: &[usize]) -> Result<f64, Error> {
        let est = self.estimates(values)?;
        Ok(rows
            .iter()
            .map(|&i| {
                let m = self.c.rows[i].cycles as f64;
                ((est[i] as f64 - m) / m).powi(2)
            })
            .sum())
    }

    /// The best point over `rows`: every point of the grid when it has at most
    /// [`EXHAUSTIVE`] points (parameters trade off against each other, so coordinate descent can
    /// stop in a local minimum), else coordinate descent from `start`. Ties keep the first point
    /// in grid order: deterministic.
    fn fit(&mut self, start: &[u32], rows: &[usize]) -> Result<Vec<u32>, Error> {
        let ranges: Vec<(u32, u32)> = self.c.free.iter().zip(start).map(|(f, &b)| f.range(b)).collect();
        let points: u64 = ranges.iter().map(|&(lo, hi)| u64::from(hi - lo + 1)).product();
        if points <= EXHAUSTIVE {
            let mut best: Option<(f64, Vec<u32>)> = None;
            let mut point: Vec<u32> = ranges.iter().map(|r| r.0).collect();
            loop {
                let c = self.cost(&point, rows)?;
                if best.as_ref().is_none_or(|(b, _)| c < *b - 1e-15) {
                    best = Some((c, point.clone()));
                }
                // The next point, odometer order.
                let mut i = 0;
                while i < point.len() {
                    if point[i] < ranges[i].1 {
                        point[i] += 1;
                        break;
                    }
                    point[i] = ranges[i].0;
                    i += 1;
                }
                if i == point.len() {
                    break;
                }
            }
            return Ok(best.map(|(_, p)| p).unwrap_or_else(|| start.to_vec()));
        }
        let mut best = start.to_vec();
        let mut best_cost = self.cost(&best, rows)?;
        for _ in 0..20 {
            let mut improved = false;
            for p in 0..best.len() {
                let (lo, hi) = self.c.free[p].range(start[p]);
                // Coarse sweep, then the neighbours of the best value one by one.
                let step = ((hi - lo) / 12).max(1);
                let mut candidates: Vec<u32> = (lo..=hi).step_by(step as usize).collect();
                let centre = best[p];
                candidates.extend(centre.saturating_sub(step).max(lo)..=(centre + step).min(hi));
                for v in candidates {
                    let mut cand = best.clone();
                    cand[p] = v;
                    let c = self.cost(&cand, rows)?;
                    if c < best_cost - 1e-15 {
                        best = cand;
                        best_cost = c;
                        improved = true;
                    }
                }
            }
            if !improved {
                break;
            }
        }
        Ok(best)
    }
}

/// `f` of every item, `jobs` at a time, in the items' order.
fn in_parallel<T: Sync, R: Send>(jobs: usize, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out: Vec<std::sync::Mutex<Option<R>>> = items.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    *out[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
                }
            });
        }
    });
    out.into_iter().map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()).expect("every item ran")).collect()
}

fn key_of(row: &Row) -> CellKey {
    (row.source.clone(), row.board.clone(), row.profile.clone())
}

/// A row's estimate from a live run's report.
fn live_estimate(row: &Row, cell: &crate::report::CellReport) -> Result<u64, Error> {
    let est = match &row.measured {
        Measured::Kat(id) => cell
            .kats
            .iter()
            .find(|k| &k.id == id)
            .map(|k| k.cycles)
            .ok_or_else(|| Error::Input(format!("{}: the run has no KAT `{id}`", row.at)))?,
        Measured::Region(name) => {
            let r = cell
                .regions
                .iter()
                .find(|r| &r.name == name)
                .ok_or_else(|| Error::Input(format!("{}: the run has no function region `{name}`", row.at)))?;
            if r.calls == 0 {
                return Err(Error::Input(format!("{}: `{name}` was never called in the run", row.at)));
            }
            r.cycles.map(|c| c.total / r.calls)
        }
        Measured::Reads(from, to) => {
            let i = &cell.cycle_counter[find_reads(row, from, to, &cell.cycle_counter)?];
            Some(i.cycles.total / i.count)
        }
    };
    est.ok_or_else(|| Error::Run(format!("{}: the run gave no cycle estimate", row.at)))
}

/// The index in `pairs` (the run's pairs of DWT cycle-counter accesses) of the pair a row names,
/// each access by `function#n`, function+offset or address; an error lists the run's pairs.
fn find_reads(row: &Row, from: &str, to: &str, pairs: &[CounterInterval]) -> Result<usize, Error> {
    let is = |name: &str, at: &str, address: u32, given: &str| {
        name == given
            || at == given
            || given.strip_prefix("0x").and_then(|h| u32::from_str_radix(h, 16).ok()).is_some_and(|a| a == address)
    };
    let found = pairs
        .iter()
        .position(|i| is(&i.from_name, &i.from, i.from_address, from) && is(&i.to_name, &i.to, i.to_address, to));
    found.ok_or_else(|| {
        let known: Vec<String> = pairs.iter().map(|i| format!("{} ({}..{})", i.name(), i.from, i.to)).collect();
        Error::Input(if known.is_empty() {
            format!("{}: the firmware read no DWT cycle counter in the run", row.at)
        } else {
            format!(
                "{}: no reads {from}..{to} of the DWT cycle counter in the run; it has {}",
                row.at,
                known.join(", ")
            )
        })
    })
}

/// A row's estimate from a replayed run's plugin results, read as the report reads them
/// (`single_activation_cycles` for a KAT, [`RegionReport`] for a function region).
fn replayed_estimate(row: &Row, cell: &CellRun, traced: &Traced, r: &Results) -> Result<u64, Error> {
    let est = match &row.measured {
        Measured::Kat(id) => {
            let region = traced
                .kat_regions
                .iter()
                .find(|(k, _)| k == id)
                .map(|(_, region)| *region)
                .ok_or_else(|| Error::Input(format!("{}: the run has no KAT `{id}` with a region", row.at)))?;
            r.single_activation_cycles(region).map_err(|e| Error::Run(format!("{}: {e}", row.at)))?
        }
        Measured::Region(name) => {
            let (id, spec) = cell
                .0
                .regions
                .iter()
                .enumerate()
                .find(|(_, s)| &s.name == name)
                .ok_or_else(|| Error::Input(format!("{}: the run has no function region `{name}`", row.at)))?;
            let stats = r.functions.get(&(id as u32)).cloned().unwrap_or_default();
            let report = RegionReport::new(spec, &stats, &|_| None);
            if report.calls == 0 {
                return Err(Error::Input(format!("{}: `{name}` was never called in the run", row.at)));
            }
            report.cycles.map(|c| c.total / report.calls)
        }
        Measured::Reads(from, to) => {
            let pair = &traced.counter_pairs[find_reads(row, from, to, &traced.counter_pairs)?];
            r.intervals.get(&(pair.from_address, pair.to_address)).map(|i| i.cycles.0 / i.count)
        }
    };
    est.ok_or_else(|| Error::Run(format!("{}: the run gave no cycle estimate", row.at)))
}

/// Grids of at most this many points are searched exhaustively.
const EXHAUSTIVE: u64 = 256;

/// The scenario, board and build profile a row runs in.
fn cell_scenario(c: &Calibration, row: &Row) -> Result<(Scenario, &'static Board, String), Error> {
    let (scenario, board) = match &row.source {
        Source::Scenario(path) => {
            let s = Scenario::load(path).map_err(|e| Error::Input(format!("{}: {e}", row.at)))?;
            let board = s
                .boards
                .iter()
                .copied()
                .find(|b| b.name == row.board)
                .ok_or_else(|| Error::Input(format!("{}: the scenario has no board `{}`", row.at, row.board)))?;
            // Calibration prices one run again under each candidate; a live counter makes what the
            // firmware runs depend on the cycles (a delay on it), which a re-pricing cannot follow.
            if s.cycle_counter == crate::config::scenario::CycleCounter::Estimated {
                return Err(Error::Input(format!(
                    "{}: {}: `cycle-counter: estimated` makes what the firmware runs depend on the estimated \
                     cycles (a delay on the counter, the digits it prints), so one run cannot be priced again \
                     under other parameters; calibrate from a scenario without it (the pairs of reads give the \
                     same cycles)",
                    row.at,
                    path.display()
                )));
            }
            (s, board)
        }
        Source::Elf(path) => {
            let board = Board::find(&row.board).ok_or_else(|| {
                Error::Input(format!("{}: unknown board `{}`; known: {}", row.at, row.board, Board::names().join(", ")))
            })?;
            let path = path.canonicalize().map_err(|e| Error::Input(format!("{}: {}: {e}", row.at, path.display())))?;
            // A path is a YAML double-quoted string once escaped as JSON.
            let elf = serde_json::to_string(&path.to_string_lossy()).expect("a string serializes");
            // Firmware without mcubench's region markers does not speak the result protocol (no
            // `end` record): it passes by exiting 0, as `run --elf --exit-code 0` judges it (its
            // KAT records, if it writes any, are still checked), or as the row's `exit` says (a
            // board's firmware ends in a loop). Rules beyond that: a scenario row.
            let plain = mcubench_elf::ElfImage::read(&path)
                .is_ok_and(|image| crate::exec::plugin::find_markers(&image).is_ok_and(|m| m.is_none()));
            let verdict = match row.exit {
                Some(exit) => format!("verdict: {{ exit: {exit} }}\n"),
                None if plain => "verdict: { exit: 0 }\n".to_string(),
                None => String::new(),
            };
            let yaml = format!("name: calibrate\nfirmware: {{ elf: {elf} }}\nboards: [{}]\n{verdict}", board.name);
            let s = Scenario::from_yaml(&c.file, &yaml).map_err(|e| Error::Input(format!("{}: {e}", row.at)))?;
            (s, board)
        }
    };
    let profile = match &row.profile {
        Some(p) if scenario.profiles.iter().any(|q| &q.name == p) => p.clone(),
        Some(p) => return Err(Error::Input(format!("{}: the scenario has no profile `{p}`", row.at))),
        None if scenario.profiles.len() == 1 => scenario.profiles[0].name.clone(),
        None => {
            return Err(Error::Input(format!(
                "{}: the scenario has several profiles; name one ({})",
                row.at,
                scenario.profiles.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
            )));
        }
    };
    Ok((scenario, board, profile))
}

/// Fits `c`'s free parameters; runs QEMU as `options` say, and prices parameter sets as
/// `pricing` says.
pub fn calibrate(c: &Calibration, options: RunOptions, pricing: Pricing) -> Result<Fitted, Error> {
    let mut ev = Evaluator::new(c, options, pricing)?;
    // The base values: the model every cell resolves to before fitting.
    let (_, board, _) = ev.cells.values().next().ok_or_else(|| Error::Input("no rows".into()))?;
    let base_model = CycleModel::resolve(board, c.timing, &c.model)
        .map_err(|e| Error::Input(format!("{}: {e}", c.file.display())))?;
    let base: Vec<u32> = c
        .free
        .iter()
        .map(|f| {
            f.value(&base_model).ok_or_else(|| {
                Error::Input(format!(
                    "{}: `{}` is free but the model has no flash; give `timing:` or `model.flash`",
                    c.file.display(),
                    f.name()
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    let all: Vec<usize> = (0..c.rows.len()).collect();
    let values = ev.fit(&base, &all)?;
    let base_est = ev.estimates(&base)?;
    let fit_est = ev.estimates(&values)?;
    let mut loo = vec![None; c.rows.len()];
    if c.rows.len() > c.free.len() {
        for (i, slot) in loo.iter_mut().enumerate() {
            let others: Vec<usize> = all.iter().copied().filter(|&j| j != i).collect();
            let v = ev.fit(&base, &others)?;
            *slot = Some(ev.estimates(&v)?[i]);
        }
    }
    let mut fitted_model = c.model.clone();
    for (f, v) in c.free.iter().zip(&values) {
        f.apply(&mut fitted_model, *v);
    }
    let mut profile_yaml = String::new();
    if let Some(t) = c.timing {
        let _ = writeln!(profile_yaml, "timing: {}", t.name);
    }
    profile_yaml.push_str("model:\n");
    profile_yaml.push_str(&fitted_model.to_yaml(2));
    let rows = c.rows.iter().enumerate().map(|(i, r)| (r.clone(), base_est[i], fit_est[i], loo[i])).collect();
    Ok(Fitted {
        free: c.free.clone(),
        ranges: c.free.iter().zip(&base).map(|(f, &b)| f.range(b)).collect(),
        base_values: base,
        values,
        rows,
        profile_yaml,
        evaluations: ev.memo.len(),
        qemu_runs: ev.runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(text: &str) -> Result<Calibration, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.csv");
        std::fs::write(&path, text).unwrap();
        Calibration::load(&path, Some("stm32f407"), None).map_err(|e| e.to_string())
    }

    #[test]
    fn csv_rows_parse_and_bad_input_names_the_line() {
        let c = csv("# measured on a Discovery board\nsource,board,profile,measure,cycles\napp.elf,mps2-an386,,kat:crc32/a,1200\ns.yaml,mps2-an386,speed,region:crc32,900\n").unwrap();
        assert_eq!(c.rows.len(), 2);
        assert_eq!(c.free, [Free::BranchRefill, Free::FlashWaitStates], "the default free parameters");
        assert_eq!(c.rows[1].measured, Measured::Region("crc32".into()));
        assert!(matches!(c.rows[1].source, Source::Scenario(_)));
        assert_eq!(c.rows[0].profile, None);
        let reads = csv("source,board,profile,measure,cycles\napp.elf,mps2-an386,,reads:bench+0x12..0x1a8,3473\napp.elf,mps2-an386,,reads:bench#1..bench#2,9\n").unwrap();
        assert_eq!(reads.rows[0].measured, Measured::Reads("bench+0x12".into(), "0x1a8".into()));
        // `#` inside a field is a read's name, not a comment.
        assert_eq!(reads.rows[1].measured, Measured::Reads("bench#1".into(), "bench#2".into()));
        for (text, want) in [
            ("source,board,profile,measure,cycles\napp.elf,mps2-an386,,reads:bench+0x12,5\n", "`reads:<from>..<to>`"),
            ("elf,board,cycles\n", "rows.csv:1: the first line must be the header"),
            ("source,board,profile,measure,cycles\napp.elf,mps2-an386,,kat:x\n", "rows.csv:2: 4 fields"),
            ("source,board,profile,measure,cycles\napp.elf,mps2-an386,,crc32,5\n", "rows.csv:2: measure `crc32`"),
            ("source,board,profile,measure,cycles\napp.elf,mps2-an386,,kat:x,-5\n", "rows.csv:2: cycles `-5`"),
            (
                "source,board,profile,measure,cycles\napp.elf,mps2-an386,,kat:x,0\napp.elf,mps2-an386,,kat:y,9\n",
                "rows.csv:2: 0 measured cycles",
            ),
        ] {
            let e = csv(text).unwrap_err();
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn fewer_rows_than_free_parameters_is_refused_with_the_count_needed() {
        let e = csv("source,board,profile,measure,cycles\napp.elf,mps2-an386,,kat:x,100\n").unwrap_err();
        assert!(e.contains("1 measured row(s) cannot fit 2 free parameter(s)") && e.contains("at least 2 rows"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.yaml");
        std::fs::write(&path, "free: [branch-refill, clock]\nrows: []\n").unwrap();
        let e = Calibration::load(&path, None, None).unwrap_err().to_string();
        assert!(e.contains("`clock` cannot be fitted"), "{e}");
        std::fs::write(&path, "rows: [{ elf: a.elf, board: mps2-an386, kat: x, cycles: 5, extra: 1 }]\n").unwrap();
        let e = Calibration::load(&path, None, None).unwrap_err().to_string();
        assert!(e.contains("unknown field `extra`") && e.contains("c.yaml"), "{e}");
        std::fs::write(&path, "rows: [{ elf: a.elf, scenario: s.yaml, board: mps2-an386, kat: x, cycles: 5 }]\n")
            .unwrap();
        let e = Calibration::load(&path, None, None).unwrap_err().to_string();
        assert!(e.contains("rows[0]: give exactly one of `scenario` or `elf`"), "{e}");
        std::fs::write(&path, "rows: [{ elf: a.elf, board: mps2-an386, reads: [f+0x2, f+0x8], cycles: 50 }]\n")
            .unwrap();
        let c = Calibration::load(&path, None, Some(&["branch-refill".to_string()])).unwrap();
        assert_eq!(c.rows[0].measured, Measured::Reads("f+0x2".into(), "f+0x8".into()));
        std::fs::write(&path, "rows: [{ elf: a.elf, board: mps2-an386, kat: x, reads: [a, b], cycles: 5 }]\n").unwrap();
        let e = Calibration::load(&path, None, None).unwrap_err().to_string();
        assert!(e.contains("rows[0]: give exactly one of `kat`, `region` or `reads`"), "{e}");
    }

    /// The report says when a fitted value lies at the top of its search or below the core's
    /// documented range, and says nothing when it lies inside.
    #[test]
    fn fitted_values_at_the_edge_of_their_range_are_noted() {
        let row = Row {
            at: "r.yaml: rows[0]".into(),
            source: Source::Elf("a.elf".into()),
            board: "mps2-an386".into(),
            profile: None,
            measured: Measured::Region("f".into()),
            cycles: 100,
            exit: None,
        };
        let fitted = |values: Vec<u32>| {
            Fitted {
                free: vec![Free::BranchRefill, Free::FlashWaitStates],
                base_values: vec![1, 5],
                values,
                ranges: vec![(0, 3), (0, 14)],
                rows: vec![(row.clone(), 90, 100, Some(100)), (row.clone(), 90, 100, Some(100))],
                profile_yaml: String::new(),
                evaluations: 60,
                qemu_runs: 1,
            }
            .render()
        };
        let text = fitted(vec![3, 14]);
        assert!(text.contains("note: branch-refill=3 is the top of the range searched"), "{text}");
        assert!(text.contains("note: flash.wait-states=14 is the top of the range searched"), "{text}");
        let text = fitted(vec![0, 0]);
        assert!(text.contains("note: branch-refill=0 is below the core's documented minimum (1)"), "{text}");
        assert!(!text.contains("flash.wait-states=0 is"), "{text}");
        assert!(!fitted(vec![1, 1]).contains("note:"));
    }

    #[test]
    fn medians_and_percentages() {
        assert_eq!(median_max(vec![3.0, 1.0, 2.0]), (2.0, 3.0));
        assert_eq!(median_max(vec![4.0, 1.0, 2.0, 3.0]), (2.5, 4.0));
        assert!((percent(102, 100) - 2.0).abs() < 1e-12);
    }
}
