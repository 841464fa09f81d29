//! Scenario files: the user's interface. One YAML file names the firmware, the boards, the build
//! profiles, the budgets and the timeout. Loading is strict: an unknown key or a wrong type is an
//! error that names the file, the key path, the line and the column, and lists the expected keys.
//!
//! Relative paths in a scenario are relative to the directory that holds the scenario file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer};

use mcubench_wire::WaitStates;

use crate::config::board::Board;
pub use crate::config::regions::{RegionBytes, RegionSpec, Split};
use crate::config::rules::ConsoleRules;
use crate::config::timing::{CycleModel, ModelSettings, ProfileName};
use crate::config::units::scalar_text;
pub use crate::config::units::{Bytes, Limit, Timeout};
use crate::config::user_board::BoardEntry;

#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{path}: cannot read the scenario file: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    /// `location` is `line:column:` when the YAML parser knows it.
    #[error("{path}:{location} {message}")]
    Parse { path: PathBuf, location: String, message: String },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

/// Regression limits against a baseline, per metric.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Regressions {
    pub flash: Option<Limit>,
    pub ram: Option<Limit>,
    pub stack: Option<Limit>,
    /// Whole-run heap peak and heap per KAT operation (firmware that reports its heap).
    pub heap: Option<Limit>,
    /// Per KAT operation and per function region (its most expensive call).
    pub instructions: Option<Limit>,
    /// Per KAT operation and per function region (estimated cycles).
    pub cycles: Option<Limit>,
    /// Whole-run instructions and estimated cycles.
    pub total: Option<Limit>,
    /// Every metric the `verdict.record` patterns capture.
    pub metrics: Option<Limit>,
    /// Every pair of the firmware's DWT cycle-counter accesses (its longest interval's estimated
    /// cycles). Apart from `cycles`: the pairs are whatever the firmware does, measurements and
    /// the `printf` between them alike.
    #[serde(rename = "cycle-counter")]
    pub cycle_counter: Option<Limit>,
}

impl Regressions {
    pub fn overridden_by(&self, over: &Regressions) -> Regressions {
        Regressions {
            flash: over.flash.or(self.flash),
            ram: over.ram.or(self.ram),
            stack: over.stack.or(self.stack),
            heap: over.heap.or(self.heap),
            instructions: over.instructions.or(self.instructions),
            cycles: over.cycles.or(self.cycles),
            total: over.total.or(self.total),
            metrics: over.metrics.or(self.metrics),
            cycle_counter: over.cycle_counter.or(self.cycle_counter),
        }
    }
}

/// Hard limits. Crossing one fails the run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Budgets {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flash: Option<Bytes>,
    /// Static RAM: .data + .bss + .uninit (not the stack).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ram: Option<Bytes>,
    /// Measured stack high-water mark of the whole run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stack: Option<Bytes>,
    /// Static worst-case bound of the reset path (call-graph analysis); unbounded fails it.
    #[serde(rename = "stack-static", skip_serializing_if = "Option::is_none")]
    pub stack_static: Option<Bytes>,
    /// Whole-run heap peak the firmware reports (`heap=` on its `end` record).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heap: Option<Bytes>,
}

impl Budgets {
    /// `self` with every limit that `over` sets replaced.
    pub fn overridden_by(&self, over: &Budgets) -> Budgets {
        Budgets {
            flash: over.flash.or(self.flash),
            ram: over.ram.or(self.ram),
            stack: over.stack.or(self.stack),
            stack_static: over.stack_static.or(self.stack_static),
            heap: over.heap.or(self.heap),
        }
    }
}

/// Per-region limits on estimated cycles and instructions: `{ "crc32": 5000, "sha3-256/empty": 9000 }`.
/// A key names a function region of the scenario's `regions` (the limit bounds its most expensive
/// call), a KAT id (the limit bounds that KAT's operation) or a pair of the firmware's DWT
/// cycle-counter accesses, `bench#1..bench#2` (the limit bounds its longest interval). Crossing one fails the run like any
/// budget (exit code 3); a key that names neither is `unknown`, which fails it too.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RegionBudgets {
    #[serde(default)]
    pub cycles: IndexMap<String, u64>,
    #[serde(default)]
    pub instructions: IndexMap<String, u64>,
    /// Whole-run estimated cycles (`cycles-total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_total: Option<u64>,
    /// Whole-run instructions (`instructions-total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_total: Option<u64>,
    /// Limits on metrics the `verdict.record` patterns capture, by name.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub metrics: IndexMap<String, u64>,
    /// Limits on a KAT operation's or function region's time (its estimated cycles / clock) at
    /// the cell's clock (`timing:` or `model.clock`), else the scenario's `table.clock`, in
    /// microseconds.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub time: IndexMap<String, crate::config::units::Micros>,
    /// Limits on cycles per byte of a KAT that reported `bytes=` (by KAT id, `sha256/1KiB`) or
    /// of a function region with `bytes` (its calls' cycles / bytes), whole cycles per byte.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub cpb: IndexMap<String, u64>,
}

impl RegionBudgets {
    /// `self` with every limit that `over` sets replaced (per key).
    pub fn overridden_by(&self, over: &RegionBudgets) -> RegionBudgets {
        let merge = |a: &IndexMap<String, u64>, b: &IndexMap<String, u64>| {
            let mut m = a.clone();
            m.extend(b.iter().map(|(k, v)| (k.clone(), *v)));
            m
        };
        RegionBudgets {
            cycles: merge(&self.cycles, &over.cycles),
            instructions: merge(&self.instructions, &over.instructions),
            cycles_total: over.cycles_total.or(self.cycles_total),
            instructions_total: over.instructions_total.or(self.instructions_total),
            metrics: merge(&self.metrics, &over.metrics),
            time: {
                let mut m = self.time.clone();
                m.extend(over.time.iter().map(|(k, v)| (k.clone(), *v)));
                m
            },
            cpb: merge(&self.cpb, &over.cpb),
        }
    }
}

/// The `budgets:` key as written: [`Budgets`] plus [`RegionBudgets`].
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBudgets {
    flash: Option<Bytes>,
    ram: Option<Bytes>,
    stack: Option<Bytes>,
    #[serde(rename = "stack-static")]
    stack_static: Option<Bytes>,
    heap: Option<Bytes>,
    #[serde(default)]
    cycles: IndexMap<String, u64>,
    #[serde(default)]
    instructions: IndexMap<String, u64>,
    #[serde(rename = "cycles-total")]
    cycles_total: Option<u64>,
    #[serde(rename = "instructions-total")]
    instructions_total: Option<u64>,
    #[serde(default)]
    metrics: IndexMap<String, u64>,
    #[serde(default)]
    time: IndexMap<String, crate::config::units::Micros>,
    #[serde(default)]
    cpb: IndexMap<String, u64>,
    /// Per-board overrides of the keys above, by board name (scenario level only).
    #[serde(default)]
    boards: IndexMap<String, RawBudgets>,
}

impl RawBudgets {
    fn split(&self) -> (Budgets, RegionBudgets) {
        (
            Budgets {
                flash: self.flash,
                ram: self.ram,
                stack: self.stack,
                stack_static: self.stack_static,
                heap: self.heap,
            },
            RegionBudgets {
                cycles: self.cycles.clone(),
                instructions: self.instructions.clone(),
                cycles_total: self.cycles_total,
                instructions_total: self.instructions_total,
                metrics: self.metrics.clone(),
                time: self.time.clone(),
                cpb: self.cpb.clone(),
            },
        )
    }
}

/// One `wait-states:` range: `{ start: 0x0, end: 0x400000, fetch: 1, data: 1 }` (fetch and data
/// default to 0).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWaitStates {
    start: u32,
    end: u32,
    #[serde(default)]
    fetch: u32,
    #[serde(default)]
    data: u32,
}

fn wait_states(raw: &[RawWaitStates], at: &str) -> Result<Vec<WaitStates>, String> {
    raw.iter()
        .map(|w| {
            if w.start >= w.end {
                return Err(format!(
                    "{at}: range 0x{:x}..0x{:x} is empty (`start` must be below `end`)",
                    w.start, w.end
                ));
            }
            Ok(WaitStates { start: w.start, end: w.end, fetch: w.fetch, data: w.data })
        })
        .collect()
}

/// What a profile measures beyond [`Profile`]: kept apart so code that builds a `Profile` by
/// hand need not know about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Measure {
    /// Wait states for the cycle model (scenario `wait-states`, or the profile's).
    pub wait_states: Vec<WaitStates>,
    /// Scenario `budgets.cycles`/`instructions` with the profile's overrides applied.
    pub region_budgets: RegionBudgets,
    /// The cycle model of each board (by name): `timing:` and `model:` of the scenario with the
    /// profile's `model:` on top, resolved for that board.
    pub models: IndexMap<String, CycleModel>,
    /// `budgets.boards`: per board (by name), the budgets that replace the scenario's and the
    /// profile's, key by key ([`Measure::budgets_for`]).
    pub board_budgets: IndexMap<String, (Budgets, RegionBudgets)>,
}

impl Measure {
    /// The budgets of this profile's cell on `board`: the profile's (the scenario's with the
    /// profile's overrides), then the board's `budgets.boards` entry on top, key by key.
    pub fn budgets_for(&self, board: &str, profile: &Budgets) -> (Budgets, RegionBudgets) {
        match self.board_budgets.get(board) {
            Some((bytes, regions)) => (profile.overridden_by(bytes), self.region_budgets.overridden_by(regions)),
            None => (profile.clone(), self.region_budgets.clone()),
        }
    }

    /// The cycle model of `board`: the resolved one, or the board's core alone.
    pub fn model_for(&self, board: &Board) -> CycleModel {
        self.models.get(board.name).cloned().unwrap_or_else(|| {
            CycleModel::resolve(board, None, &ModelSettings::default()).expect("a board runs its own core")
        })
    }
}

/// Scenario `timing:`: one board timing profile for every board, or one per board by name.
#[derive(Debug, Clone)]
enum RawTiming {
    All(ProfileName),
    PerBoard(IndexMap<String, ProfileName>),
}

impl<'de> Deserialize<'de> for RawTiming {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawTiming, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawTiming;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a board timing profile name, or a map of board name to profile name")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RawTiming, E> {
                ProfileName::deserialize(serde::de::value::StrDeserializer::<E>::new(v)).map(RawTiming::All)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, m: A) -> Result<RawTiming, A::Error> {
                IndexMap::deserialize(serde::de::value::MapAccessDeserializer::new(m)).map(RawTiming::PerBoard)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFirmware {
    /// Directory of a firmware crate (holds its Cargo.toml).
    cargo: Option<PathBuf>,
    /// Binary target of that crate; defaults to the crate's directory name.
    bin: Option<String>,
    /// Features enabled in every profile.
    #[serde(default)]
    features: Vec<String>,
    /// A prebuilt ELF; no build step. With `command` or `matrix`, a path template.
    elf: Option<PathBuf>,
    /// A build command (run with `sh -c` in the scenario's directory), a template over the matrix
    /// variables.
    command: Option<String>,
    /// The KAT vectors (a file, or a directory of `*.txt` files) the host checks every `kat`
    /// record against; see [`crate::config::vectors`].
    vectors: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawProfile {
    #[serde(default, deserialize_with = "opt_level")]
    opt_level: Option<String>,
    #[serde(default)]
    features: Vec<String>,
    /// `--cfg` flags for rustc (e.g. `aes_compact`).
    #[serde(default)]
    cfg: Vec<String>,
    #[serde(default)]
    budgets: RawBudgets,
    #[serde(default)]
    regressions: Regressions,
    /// Replaces the scenario's `wait-states` for this profile.
    wait_states: Option<Vec<RawWaitStates>>,
    /// Overrides the scenario's `model:` for this profile, key by key.
    model: Option<ModelSettings>,
}

fn opt_level<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let level = scalar_text(d, "an opt-level: 0, 1, 2, 3, s or z")?;
    match level.as_str() {
        "0" | "1" | "2" | "3" | "s" | "z" => Ok(Some(level)),
        _ => Err(serde::de::Error::custom(format!("opt-level `{level}` is not one of 0, 1, 2, 3, s, z"))),
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: String,
    firmware: RawFirmware,
    /// Built-in boards by name, and boards of the scenario's own.
    boards: Vec<BoardEntry>,
    #[serde(default)]
    profiles: IndexMap<String, RawProfile>,
    #[serde(default)]
    budgets: RawBudgets,
    #[serde(default)]
    regressions: Regressions,
    timeout: Option<Timeout>,
    /// Functions measured per call (function regions), by demangled or symbol name, optionally
    /// with bytes per call and a split.
    #[serde(default)]
    regions: Vec<RegionSpec>,
    /// Wait states of the cycle model, per address range.
    #[serde(default, rename = "wait-states")]
    wait_states: Vec<RawWaitStates>,
    /// A named board timing profile (`mcubench boards` lists them) for every board, or one per
    /// board by name (`{ mps2-an505: stm32h563 }`; boards not named run without one).
    timing: Option<RawTiming>,
    /// Cycle model parameters and memory system, on top of `timing`.
    #[serde(default)]
    model: ModelSettings,
    /// Record the lowest stack address written (per region and whole run) with store callbacks.
    #[serde(default, rename = "stack-probe")]
    stack_probe: bool,
    /// What loads of the DWT cycle counter read.
    #[serde(default, rename = "cycle-counter")]
    cycle_counter: CycleCounter,
    /// Which static bound the `stack-static` budget checks.
    #[serde(default, rename = "stack-static-budget")]
    stack_static_budget: StackStaticBudget,
    /// Verdict rules for firmware that does not speak the result protocol.
    verdict: Option<ConsoleRules>,
    /// Variables whose every combination is a cell (with `firmware.command`/`elf` templates).
    #[serde(default)]
    matrix: IndexMap<String, Vec<String>>,
    /// The published table the report renders (`secure-boot`), its clock, rows and columns.
    table: Option<crate::config::table::RawTable>,
}

/// Where the firmware comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Firmware {
    Cargo {
        package_dir: PathBuf,
        bin: String,
        features: Vec<String>,
    },
    Elf {
        path: PathBuf,
    },
    /// A build command (make, cmake, a script) and the ELF it leaves, both templates over the
    /// matrix variables (`{alg}`) and `{board}`; without a command, a list of prebuilt ELFs.
    Template {
        /// The scenario file's directory: where the command runs and relative paths start.
        dir: PathBuf,
        command: Option<String>,
        elf: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub name: String,
    pub opt_level: Option<String>,
    pub features: Vec<String>,
    pub cfg: Vec<String>,
    /// Scenario budgets with this profile's overrides applied.
    pub budgets: Budgets,
    /// Scenario regression limits with this profile's overrides applied.
    pub regressions: Regressions,
    /// Values of the matrix variables for this cell (`firmware.command`/`elf` templates).
    pub vars: IndexMap<String, String>,
}

impl Profile {
    /// A profile that only names a cell and carries the scenario's limits (no build settings):
    /// the one profile of a prebuilt ELF or of cargo firmware without `profiles`, or one variant
    /// of a build matrix.
    fn plain(name: &str, budgets: &Budgets, regressions: Regressions, vars: IndexMap<String, String>) -> Profile {
        Profile {
            name: name.to_string(),
            opt_level: None,
            features: Vec::new(),
            cfg: Vec::new(),
            budgets: budgets.clone(),
            regressions,
            vars,
        }
    }
}

/// Which static stack bound the `stack-static` budget checks (`stack-static-budget:`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StackStaticBudget {
    /// The sound bound of the reset path (default).
    #[default]
    Sound,
    /// The bound with panic/abort paths cut (`stack_static.excluding_panic.reset`): a choice the
    /// scenario makes explicitly, for firmware whose panics end the run anyway.
    ExcludingPanic,
}

/// What the firmware's loads of the DWT cycle counter (`DWT_CYCCNT`) read (`cycle-counter:`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum CycleCounter {
    /// 0, as under QEMU, which does not model the counter (default).
    #[default]
    Zero,
    /// The estimated cycles, as on the board (see [`crate::exec::counter`]).
    Estimated,
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    /// The file it was loaded from, or a description for scenarios made on the command line.
    pub source: PathBuf,
    pub firmware: Firmware,
    pub boards: Vec<&'static Board>,
    pub profiles: Vec<Profile>,
    pub timeout: Duration,
    /// Functions measured per call (`regions:`), by demangled or symbol name, resolved per ELF;
    /// with the bytes each call processes and how to split the calls.
    pub regions: Vec<RegionSpec>,
    /// Record the lowest stack address written (`stack-probe: true`).
    pub stack_probe: bool,
    /// What loads of the DWT cycle counter read (`cycle-counter:`).
    pub cycle_counter: CycleCounter,
    /// Which static bound the `stack-static` budget checks (`stack-static-budget:`).
    pub stack_static_budget: StackStaticBudget,
    /// Per-profile measurement settings ([`Scenario::measure`]).
    pub measures: IndexMap<String, Measure>,
    /// `firmware.vectors`, loaded: the host's copy of the KAT vectors.
    pub vectors: Option<crate::config::vectors::Vectors>,
    /// `verdict:` rules; without them a run passes only through the result protocol.
    pub verdict: Option<ConsoleRules>,
    /// `table:`, the published table the report renders.
    pub table: Option<crate::config::table::TableSpec>,
}

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Name of the single profile of a prebuilt ELF.
pub const PREBUILT_PROFILE: &str = "prebuilt";

impl Scenario {
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ScenarioError::Read { path: path.to_owned(), source })?;
        Scenario::from_yaml(path, &text)
    }

    /// Parses scenario text; `path` names the file in errors and anchors relative paths.
    pub fn from_yaml(path: &Path, text: &str) -> Result<Scenario, ScenarioError> {
        let raw: RawScenario = serde_yaml_ng::from_str(text).map_err(|e| {
            let (location, message) = yaml_message(&e);
            ScenarioError::Parse { path: path.to_owned(), location, message }
        })?;
        // A bare file name (`mcubench run kat.yaml`) has the empty path as its parent: the
        // current directory, which a command's `current_dir` needs spelled out.
        let base = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let invalid = |message: String| ScenarioError::Invalid { path: path.to_owned(), message };

        if raw.name.trim().is_empty() {
            return Err(invalid("`name` is empty; give the scenario a name".into()));
        }
        let templated = raw.firmware.command.is_some() || !raw.matrix.is_empty();
        let firmware = match (&raw.firmware.cargo, &raw.firmware.elf) {
            (None, Some(elf)) if templated => {
                if raw.firmware.bin.is_some() || !raw.firmware.features.is_empty() {
                    return Err(invalid(
                        "firmware: `bin` and `features` apply to `cargo` firmware, not to a `command` build".into(),
                    ));
                }
                let elf = elf.to_str().ok_or_else(|| invalid("firmware.elf: not UTF-8".into()))?.to_string();
                check_templates(raw.firmware.command.as_deref(), &elf, &raw.matrix).map_err(invalid)?;
                Firmware::Template { dir: base.to_path_buf(), command: raw.firmware.command.clone(), elf }
            }
            (Some(_), _) if templated => {
                return Err(invalid(
                    "firmware: `command` and `matrix` describe non-cargo builds; a `cargo` firmware varies by `profiles`"
                        .into(),
                ));
            }
            (None, None) if raw.firmware.command.is_some() => {
                return Err(invalid("firmware.command: give the ELF it builds as `elf: <path template>`".into()));
            }
            (Some(dir), None) => {
                let package_dir = base.join(dir);
                if !package_dir.join("Cargo.toml").is_file() {
                    return Err(invalid(format!(
                        "firmware.cargo: no Cargo.toml in `{}` (paths are relative to the scenario file's directory)",
                        package_dir.display()
                    )));
                }
                let bin = match &raw.firmware.bin {
                    Some(b) => b.clone(),
                    None => dir
                        .file_name()
                        .and_then(|n| n.to_str())
                        .map(str::to_owned)
                        .ok_or_else(|| invalid("firmware.bin: cannot derive a binary name; set `bin`".into()))?,
                };
                Firmware::Cargo { package_dir, bin, features: raw.firmware.features.clone() }
            }
            (None, Some(elf)) => {
                if raw.firmware.bin.is_some() || !raw.firmware.features.is_empty() {
                    return Err(invalid(
                        "firmware: `bin` and `features` apply to `cargo` firmware, not to a prebuilt `elf`".into(),
                    ));
                }
                let path = base.join(elf);
                if !path.is_file() {
                    return Err(invalid(format!(
                        "firmware.elf: `{}` does not exist (paths are relative to the scenario file's directory)",
                        path.display()
                    )));
                }
                Firmware::Elf { path }
            }
            _ => {
                return Err(invalid("firmware: give exactly one of `cargo: <crate dir>` or `elf: <file>`".into()));
            }
        };

        if let Some(rules) = &raw.verdict {
            rules.check().map_err(invalid)?;
        }
        if raw.boards.is_empty() {
            return Err(invalid(format!(
                "boards: the list is empty; name one or more of: {}",
                Board::names().join(", ")
            )));
        }
        let mut boards: Vec<&'static Board> = Vec::new();
        for entry in &raw.boards {
            let name = entry.name();
            if boards.iter().any(|b| b.name == name) {
                return Err(invalid(format!("boards: `{name}` is listed twice")));
            }
            boards.push(entry.board(path));
        }

        let (scenario_budgets, scenario_region_budgets) = raw.budgets.split();
        let board_budgets = board_budgets(&raw.budgets, &boards, text)
            .map_err(|(location, message)| ScenarioError::Parse { path: path.to_owned(), location, message })?;
        let scenario_wait_states = wait_states(&raw.wait_states, "wait-states").map_err(invalid)?;
        if let Some(RawTiming::PerBoard(map)) = &raw.timing
            && let Some(name) = map.keys().find(|n| !boards.iter().any(|b| b.name == n.as_str()))
        {
            return Err(invalid(format!(
                "timing: `{name}` is not one of this scenario's boards ({}); name a board from `boards:`",
                boards.iter().map(|b| b.name).collect::<Vec<_>>().join(", ")
            )));
        }
        let profile_of = |board: &Board| match &raw.timing {
            None => None,
            Some(RawTiming::All(p)) => Some(p.0),
            Some(RawTiming::PerBoard(map)) => map.get(board.name).map(|p| p.0),
        };
        let resolve = |settings: &ModelSettings, at: &str, wait_states: &[WaitStates]| {
            let mut models = IndexMap::new();
            if (raw.timing.is_some() || settings.flash.is_some()) && !wait_states.is_empty() {
                return Err(invalid(format!(
                    "{at}wait-states: give the flash timing once, in `timing:` or `model.flash`, not also as `wait-states`"
                )));
            }
            for board in &boards {
                let m = CycleModel::resolve(board, profile_of(board), settings).map_err(|e| {
                    // The key refused, where this profile sets it, else where the scenario does
                    // (`timing: { board: … }` names the board under the key).
                    let key = e.key.as_str();
                    let location = [
                        format!("{at}{key}.{}", board.name),
                        format!("{at}{key}"),
                        format!("{key}.{}", board.name),
                        key.to_string(),
                    ]
                    .iter()
                    .map(|path| key_path_location(text, &path.split('.').collect::<Vec<_>>()))
                    .find(|l| !l.is_empty())
                    .unwrap_or_default();
                    ScenarioError::Parse {
                        path: path.to_owned(),
                        location,
                        message: format!("{at}{e} (board `{}`)", board.name),
                    }
                })?;
                models.insert(board.name.to_string(), m);
            }
            Ok(models)
        };
        let scenario_measure = Measure {
            wait_states: scenario_wait_states.clone(),
            region_budgets: scenario_region_budgets.clone(),
            models: resolve(&raw.model, "", &scenario_wait_states)?,
            board_budgets: board_budgets.clone(),
        };
        let mut measures = IndexMap::new();
        crate::config::regions::check(&raw.regions).map_err(invalid)?;
        let mut profiles = Vec::new();
        match &firmware {
            Firmware::Cargo { .. } => {
                if raw.profiles.is_empty() {
                    profiles.push(Profile::plain("release", &scenario_budgets, raw.regressions, IndexMap::new()));
                    measures.insert("release".to_string(), scenario_measure.clone());
                }
                for (name, p) in &raw.profiles {
                    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
                        return Err(invalid(format!(
                            "profiles: `{name}` is not a valid profile name (letters, digits, - and _)"
                        )));
                    }
                    let (budgets, region_budgets) = p.budgets.split();
                    if let Some(board) = p.budgets.boards.keys().next() {
                        return Err(invalid(format!(
                            "profiles.{name}.budgets.boards.{board}: per-board budgets go in the scenario's \
                             `budgets: {{ boards: {{ {board}: ... }} }}`, not in a profile"
                        )));
                    }
                    profiles.push(Profile {
                        name: name.clone(),
                        opt_level: p.opt_level.clone(),
                        features: p.features.clone(),
                        cfg: p.cfg.clone(),
                        budgets: scenario_budgets.overridden_by(&budgets),
                        regressions: raw.regressions.overridden_by(&p.regressions),
                        vars: IndexMap::new(),
                    });
                    let wait_states = match &p.wait_states {
                        Some(w) => wait_states(w, &format!("profiles.{name}.wait-states")).map_err(invalid)?,
                        None => scenario_wait_states.clone(),
                    };
                    let region_budgets = scenario_region_budgets.overridden_by(&region_budgets);
                    let models = match &p.model {
                        Some(m) => resolve(&raw.model.overridden_by(m), &format!("profiles.{name}."), &wait_states)?,
                        None if p.wait_states.is_some() => {
                            resolve(&raw.model, &format!("profiles.{name}."), &wait_states)?
                        }
                        None => scenario_measure.models.clone(),
                    };
                    measures.insert(
                        name.clone(),
                        Measure { wait_states, region_budgets, models, board_budgets: board_budgets.clone() },
                    );
                }
            }
            Firmware::Template { .. } => {
                if !raw.profiles.is_empty() {
                    return Err(invalid(
                        "profiles: a `command` build varies by `matrix` variables, not by profiles".into(),
                    ));
                }
                for vars in variants(&raw.matrix) {
                    let name = if vars.is_empty() {
                        PREBUILT_PROFILE.to_string()
                    } else {
                        vars.values().cloned().collect::<Vec<_>>().join("-")
                    };
                    profiles.push(Profile::plain(&name, &scenario_budgets, raw.regressions, vars));
                    measures.insert(name, scenario_measure.clone());
                }
            }
            Firmware::Elf { .. } => {
                if !raw.profiles.is_empty() {
                    return Err(invalid(
                        "profiles: a prebuilt `elf` has no build profiles; remove `profiles` or use `cargo` firmware"
                            .into(),
                    ));
                }
                profiles.push(Profile::plain(PREBUILT_PROFILE, &scenario_budgets, raw.regressions, IndexMap::new()));
                measures.insert(PREBUILT_PROFILE.to_string(), scenario_measure.clone());
            }
        }

        let table = raw.table.as_ref().map(|t| t.spec()).transpose().map_err(invalid)?;
        // A time budget is cycles at a clock: the cell's (timing profile or model.clock), else
        // the table's. Without either it measures nothing.
        let unclocked_board_time = measures.values().find_map(|m| {
            boards
                .iter()
                .filter(|b| m.model_for(b).clock_hz.is_none())
                .find_map(|b| m.board_budgets.get(b.name).and_then(|(_, r)| r.time.keys().next()).map(|n| (n, b.name)))
        });
        if table.as_ref().and_then(|t| t.clock_hz).is_none()
            && let Some((name, board)) = unclocked_board_time
        {
            return Err(invalid(format!(
                "budgets.boards.{board}.time: `{name}` needs a clock to turn cycles into time; give `{board}` one with \
                 `timing:` or `model: {{ clock: ... }}`, or add `table: {{ kind: secure-boot, clock: 320 MHz }}`"
            )));
        }
        if table.as_ref().and_then(|t| t.clock_hz).is_none()
            && let Some((name, _)) = measures
                .values()
                .filter(|m| boards.iter().any(|b| m.model_for(b).clock_hz.is_none()))
                .flat_map(|m| m.region_budgets.time.iter())
                .next()
        {
            return Err(invalid(format!(
                "budgets.time: `{name}` needs a clock to turn cycles into time; give every board one with `timing:` or \
                 `model: {{ clock: ... }}`, or add `table: {{ kind: secure-boot, clock: 320 MHz }}`"
            )));
        }
        let vectors = raw
            .firmware
            .vectors
            .as_ref()
            .map(|v| {
                crate::config::vectors::Vectors::load(&base.join(v))
                    .map_err(|e| invalid(format!("firmware.vectors: {e}")))
            })
            .transpose()?;

        Ok(Scenario {
            name: raw.name,
            source: path.to_owned(),
            firmware,
            boards,
            profiles,
            timeout: raw.timeout.map_or(DEFAULT_TIMEOUT, |t| t.0),
            regions: raw.regions,
            stack_probe: raw.stack_probe,
            cycle_counter: raw.cycle_counter,
            stack_static_budget: raw.stack_static_budget,
            measures,
            vectors,
            verdict: raw.verdict,
            table,
        })
    }

    /// Measurement settings of the profile named `profile` (defaults if there is none).
    pub fn measure(&self, profile: &str) -> Measure {
        self.measures.get(profile).cloned().unwrap_or_default()
    }

    /// Regression limits of the profile named `profile` (scenario defaults if there is none).
    pub fn regressions(&self, profile: &str) -> Regressions {
        self.profiles.iter().find(|p| p.name == profile).map(|p| p.regressions).unwrap_or_default()
    }

    /// Keeps only the named boards and profiles (all of them when a list is empty); a name the
    /// scenario lacks is an error that names the flag.
    pub fn restrict(&mut self, boards: &[String], profiles: &[String]) -> Result<(), String> {
        if let Some(n) = boards.iter().find(|n| !self.boards.iter().any(|b| b.name == n.as_str())) {
            return Err(format!("--board {n}: the scenario has no such board"));
        }
        if let Some(n) = profiles.iter().find(|n| !self.profiles.iter().any(|p| &p.name == *n)) {
            return Err(format!("--profile {n}: the scenario has no such profile"));
        }
        if !boards.is_empty() {
            self.boards.retain(|b| boards.iter().any(|n| n == b.name));
        }
        if !profiles.is_empty() {
            self.profiles.retain(|p| profiles.contains(&p.name));
        }
        Ok(())
    }

    /// A one-cell scenario for `mcubench run --elf FILE --board NAME`.
    pub fn for_elf(elf: &Path, board: &'static Board, budgets: Budgets, timeout: Duration) -> Scenario {
        Scenario {
            name: elf.file_stem().and_then(|s| s.to_str()).unwrap_or("elf").to_owned(),
            source: elf.to_owned(),
            firmware: Firmware::Elf { path: elf.to_owned() },
            boards: vec![board],
            profiles: vec![Profile::plain(PREBUILT_PROFILE, &budgets, Regressions::default(), IndexMap::new())],
            timeout,
            regions: Vec::new(),
            stack_probe: false,
            cycle_counter: CycleCounter::Zero,
            stack_static_budget: StackStaticBudget::Sound,
            measures: IndexMap::new(),
            vectors: None,
            verdict: None,
            table: None,
        }
    }
}

/// Every combination of the matrix variables' values, first variable slowest (one empty
/// combination without a matrix).
fn variants(matrix: &IndexMap<String, Vec<String>>) -> Vec<IndexMap<String, String>> {
    let mut out = vec![IndexMap::new()];
    for (name, values) in matrix {
        out = out
            .into_iter()
            .flat_map(|vars| {
                values.iter().map(move |v| {
                    let mut vars = vars.clone();
                    vars.insert(name.clone(), v.clone());
                    vars
                })
            })
            .collect();
    }
    out
}

/// The `{name}` placeholders of a template.
fn placeholders(template: &str) -> Vec<&str> {
    template.split('{').skip(1).filter_map(|rest| rest.split_once('}').map(|(name, _)| name)).collect()
}

/// Every placeholder names a matrix variable or `board`; every matrix variable is used, has
/// values, and its values are safe in a cell name and a path.
fn check_templates(command: Option<&str>, elf: &str, matrix: &IndexMap<String, Vec<String>>) -> Result<(), String> {
    for (key, template) in command.map(|c| ("firmware.command", c)).into_iter().chain([("firmware.elf", elf)]) {
        for name in placeholders(template) {
            if name != "board" && !matrix.contains_key(name) {
                let known: Vec<&str> = matrix.keys().map(String::as_str).chain(["board"]).collect();
                return Err(format!("{key}: `{{{name}}}` is not a matrix variable; known: {}", known.join(", ")));
            }
        }
    }
    for (name, values) in matrix {
        if values.is_empty() {
            return Err(format!("matrix.{name}: give at least one value"));
        }
        if let Some(v) =
            values.iter().find(|v| v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c)))
        {
            return Err(format!("matrix.{name}: `{v}` is not a valid value (letters, digits, . _ + -)"));
        }
        let used = command.is_some_and(|c| placeholders(c).contains(&name.as_str()))
            || placeholders(elf).contains(&name.as_str());
        if !used {
            return Err(format!(
                "matrix.{name}: the variable is used by neither `firmware.command` nor `firmware.elf`, so every value would build the same ELF"
            ));
        }
    }
    Ok(())
}

/// `template` with `{name}` replaced by the variable's value (placeholders are checked at load).
pub fn expand(template: &str, vars: &IndexMap<String, String>, board: &str) -> String {
    let mut out = template.to_string();
    for (name, value) in vars.iter().map(|(n, v)| (n.as_str(), v.as_str())).chain([("board", board)]) {
        out = out.replace(&format!("{{{name}}}"), value);
    }
    out
}

/// `budgets.boards`, checked: every key names one of the scenario's boards (else an error with
/// the key's `line:column:` in `text`, listing the boards), and no entry nests `boards` again.
fn board_budgets(
    raw: &RawBudgets,
    boards: &[&'static Board],
    text: &str,
) -> Result<IndexMap<String, (Budgets, RegionBudgets)>, (String, String)> {
    let mut out = IndexMap::new();
    for (name, b) in &raw.boards {
        if !boards.iter().any(|x| x.name == name.as_str()) {
            return Err((
                key_location(text, "budgets", name),
                format!(
                    "budgets.boards: `{name}` is not one of this scenario's boards ({}); name a board from `boards:`",
                    boards.iter().map(|b| b.name).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        if !b.boards.is_empty() {
            return Err((
                key_location(text, "budgets", name),
                format!("budgets.boards.{name}: `boards` cannot nest; give this board's limits directly"),
            ));
        }
        out.insert(name.clone(), b.split());
    }
    Ok(out)
}

/// `line:column:` of the first `key:` (block or flow style) under the top-level `section:`, or ""
/// when it is not found (the message still names the key path).
fn key_location(text: &str, section: &str, key: &str) -> String {
    key_path_location(text, &[section, key])
}

/// `line:column:` of the last key of `path` (`["profiles", "speed", "model", "icache"]`), each key
/// looked for after the one before it (block or flow style) and before the next top-level key,
/// the first at the start of a line; "" when a key is not there.
fn key_path_location(text: &str, path: &[&str]) -> String {
    let lines: Vec<&str> = text.lines().map(|l| l.split(" #").next().unwrap_or(l)).collect();
    let is_key_at = |line: &str, at: usize, key: &str| {
        let before = line[..at].chars().next_back();
        let after = line[at + key.len()..].trim_start();
        before.is_none_or(|c| c.is_whitespace() || c == '{' || c == ',' || c == '"' || c == '\'')
            && (after.starts_with(':') || after.starts_with("\":") || after.starts_with("':"))
    };
    let Some((&top, nested)) = path.split_first() else { return String::new() };
    let Some(section) = lines.iter().position(|l| l.starts_with(top) && is_key_at(l, 0, top)) else {
        return String::new();
    };
    let (mut line, mut column) = (section, 0);
    for key in nested {
        let mut found = None;
        for (i, code) in lines.iter().enumerate().skip(line) {
            // The section ends at the next top-level key.
            if i > section && code.starts_with(|c: char| !c.is_whitespace() && c != '-' && c != '#') {
                break;
            }
            let mut from = if i == line { column } else { 0 };
            while let Some(at) = code.get(from..).and_then(|rest| rest.find(key)).map(|a| a + from) {
                if is_key_at(code, at, key) {
                    found = Some((i, at));
                    break;
                }
                from = at + key.len();
            }
            if found.is_some() {
                break;
            }
        }
        let Some(at) = found else { return String::new() };
        (line, column) = at;
    }
    format!("{}:{}:", line + 1, column + 1)
}

/// serde_yaml_ng puts the location last; move it to the front, compiler style (`file:line:col: ...`).
fn yaml_message(e: &serde_yaml_ng::Error) -> (String, String) {
    let text = e.to_string();
    let Some(loc) = e.location() else { return (String::new(), text) };
    let suffix = format!(" at line {} column {}", loc.line(), loc.column());
    let body = text.strip_suffix(&suffix).unwrap_or(&text).to_owned();
    (format!("{}:{}:", loc.line(), loc.column()), body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("fw")).unwrap();
        std::fs::write(dir.path().join("fw/Cargo.toml"), "[package]\nname = \"fw\"\n").unwrap();
        std::fs::write(dir.path().join("app.elf"), b"\x7fELF").unwrap();
        dir
    }

    fn load(dir: &tempfile::TempDir, text: &str) -> Result<Scenario, String> {
        Scenario::from_yaml(&dir.path().join("s.yaml"), text).map_err(|e| e.to_string())
    }

    const GOOD: &str = "name: kat
firmware: { cargo: fw, features: [std-vectors] }
boards: [mps2-an386, microbit]
profiles:
  speed: { opt-level: 3 }
  size: { opt-level: s, features: [compact], cfg: [aes_compact], budgets: { flash: 16 KiB } }
budgets:
  flash: 24 KiB
  ram: 4096
  stack: 2 KiB
timeout: 20 s
";

    #[test]
    fn a_bare_scenario_file_name_builds_in_the_current_directory() {
        let yaml = "name: s\nfirmware: { command: make, elf: fw.elf }\nboards: [mps2-an386]\n";
        for (path, dir) in [("s.yaml", "."), ("fw/s.yaml", "fw")] {
            let s = Scenario::from_yaml(Path::new(path), yaml).unwrap();
            let Firmware::Template { dir: got, .. } = &s.firmware else { panic!("a command build") };
            assert_eq!(got, Path::new(dir), "{path}");
        }
    }

    #[test]
    fn loads_a_full_scenario_in_declared_order() {
        let dir = fixture_dir();
        let s = load(&dir, GOOD).unwrap();
        assert_eq!(s.name, "kat");
        assert_eq!(s.boards.iter().map(|b| b.name).collect::<Vec<_>>(), ["mps2-an386", "microbit"]);
        assert_eq!(s.profiles.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["speed", "size"]);
        assert_eq!(s.timeout, Duration::from_secs(20));
        let Firmware::Cargo { bin, features, .. } = &s.firmware else { panic!("cargo firmware") };
        assert_eq!(bin, "fw");
        assert_eq!(features, &["std-vectors"]);
        let size = &s.profiles[1];
        assert_eq!(size.opt_level.as_deref(), Some("s"));
        assert_eq!(size.cfg, ["aes_compact"]);
        // The profile overrides flash only; ram and stack come from the scenario.
        assert_eq!(
            size.budgets,
            Budgets {
                flash: Some(Bytes(16 * 1024)),
                ram: Some(Bytes(4096)),
                stack: Some(Bytes(2048)),
                stack_static: None,
                heap: None
            }
        );
        assert_eq!(s.profiles[0].budgets.flash, Some(Bytes(24 * 1024)));
    }

    #[test]
    fn a_typo_names_line_column_and_expected_keys() {
        let dir = fixture_dir();
        let err = load(&dir, &GOOD.replace("opt-level: s", "opt-levl: s")).unwrap_err();
        assert!(err.contains("s.yaml:6:11: profiles.size: unknown field"), "{err}");
        assert!(err.contains("profiles.size: unknown field `opt-levl`"), "{err}");
        assert!(err.contains("expected one of `opt-level`, `features`, `cfg`, `budgets`"), "{err}");
    }

    #[test]
    fn a_wrong_type_names_the_key_and_place() {
        let dir = fixture_dir();
        let err = load(&dir, &GOOD.replace("boards: [mps2-an386, microbit]", "boards: 3")).unwrap_err();
        assert!(err.contains("s.yaml:3:9: boards: invalid type: integer `3`, expected a sequence"), "{err}");
    }

    #[rstest::rstest]
    #[case("flash: 24 KiB", "flash: 24 parsecs", "unknown size unit `parsecs`")]
    #[case("timeout: 20 s", "timeout: 0 s", "timeout of zero")]
    #[case("opt-level: 3", "opt-level: 4", "opt-level `4` is not one of")]
    #[case(
        "boards: [mps2-an386, microbit]",
        "boards: [mps2-an999]",
        "unknown board `mps2-an999`; known boards: mps2-an386"
    )]
    #[case("boards: [mps2-an386, microbit]", "boards: []", "the list is empty")]
    #[case("boards: [mps2-an386, microbit]", "boards: [microbit, microbit]", "listed twice")]
    #[case("{ cargo: fw, features: [std-vectors] }", "{ cargo: nowhere }", "no Cargo.toml in")]
    #[case("{ cargo: fw, features: [std-vectors] }", "{ cargo: fw, elf: app.elf }", "exactly one of")]
    #[case("{ cargo: fw, features: [std-vectors] }", "{ }", "exactly one of")]
    #[case("name: kat", "name: \"\"", "`name` is empty")]
    #[case(
        "name: kat",
        "name: kat\ncycle-counter: yes",
        ":2:16: cycle-counter: unknown variant `yes`, expected `zero` or `estimated`"
    )]
    fn bad_values_get_a_clear_error(#[case] from: &str, #[case] to: &str, #[case] expected: &str) {
        let dir = fixture_dir();
        let err = load(&dir, &GOOD.replace(from, to)).unwrap_err();
        assert!(err.contains(expected), "{err}");
        assert!(err.starts_with(&dir.path().join("s.yaml").display().to_string()), "{err}");
    }

    #[test]
    fn a_user_board_takes_its_defaults_from_machine_and_core() {
        let dir = fixture_dir();
        let yaml = GOOD.replace(
            "boards: [mps2-an386, microbit]",
            "boards:\n  - mps2-an386\n  - name: stm32f0-like\n    core: cortex-m0+\n    qemu: { machine: microbit }\n    \
             memory: { flash: { origin: 0, length: 64 KiB }, ram: { origin: 0x20000000, length: 8 KiB } }",
        );
        let s = load(&dir, &yaml).unwrap();
        assert_eq!(s.boards.iter().map(|b| b.name).collect::<Vec<_>>(), ["mps2-an386", "stm32f0-like"]);
        let b = s.boards[1];
        assert!(b.is_user() && !s.boards[0].is_user());
        assert_eq!(b.core, mcubench_wire::Core::CortexM0Plus);
        assert_eq!(
            (b.qemu_machine, b.qemu_cpu, b.systick_hz, b.rust_target),
            ("microbit", "cortex-m0", 16_000_000, "thumbv6m-none-eabi")
        );
        assert_eq!(b.layout.name, "stm32f0-like");
        assert_eq!(b.ticks_to_instructions(2), 125);
        let memory_x = b.layout.memory_x();
        assert!(
            memory_x.starts_with("/* mcubench memory layout `stm32f0-like` (user board stm32f0-like).\n"),
            "{memory_x}"
        );
        assert!(
            memory_x.contains(&format!("from the board `stm32f0-like` of {}", dir.path().join("s.yaml").display()))
        );
        assert!(memory_x.contains("User board `stm32f0-like` (Cortex-M0+), run on QEMU's microbit (-cpu cortex-m0):"));
        assert!(memory_x.ends_with(
            "MEMORY\n{\n  FLASH : ORIGIN = 0x00000000, LENGTH = 64K\n  RAM   : ORIGIN = 0x20000000, LENGTH = 8K\n}\n"
        ));
        assert_eq!((memory_x.matches("/*").count(), memory_x.matches("*/").count()), (1, 1));
        // `--board` restricts to it by name, like a built-in.
        let mut s = s;
        s.restrict(&["stm32f0-like".into()], &[]).unwrap();
        assert_eq!(s.boards.len(), 1);
    }

    #[test]
    fn a_prebuilt_elf_has_one_profile_and_no_build_options() {
        let dir = fixture_dir();
        let s = load(&dir, "name: c\nfirmware: { elf: app.elf }\nboards: [mps2-an386]\n").unwrap();
        assert_eq!(s.profiles.len(), 1);
        assert_eq!(s.profiles[0].name, PREBUILT_PROFILE);
        assert_eq!(s.timeout, DEFAULT_TIMEOUT);
        let err =
            load(&dir, "name: c\nfirmware: { elf: app.elf }\nboards: [mps2-an386]\nprofiles: { a: {} }\n").unwrap_err();
        assert!(err.contains("no build profiles"), "{err}");
    }

    #[test]
    fn regression_limits_are_relative_or_absolute_and_profiles_override() {
        let dir = fixture_dir();
        let yaml = format!("{GOOD}regressions: {{ flash: 1 %, ram: 256 B, instructions: 2.5 % }}\n")
            .replace("speed: { opt-level: 3 }", "speed: { opt-level: 3, regressions: { flash: 0 % } }");
        let s = load(&dir, &yaml).unwrap();
        let speed = s.regressions("speed");
        assert_eq!(speed.flash, Some(Limit::Percent(0.0)));
        assert_eq!(speed.ram, Some(Limit::Absolute(256)));
        assert_eq!(speed.instructions, Some(Limit::Percent(2.5)));
        assert_eq!(s.regressions("size").flash, Some(Limit::Percent(1.0)));
        let err = load(&dir, &format!("{GOOD}regressions: {{ flash: -1 % }}\n")).unwrap_err();
        assert!(err.contains("cannot be negative"), "{err}");
        let err = load(&dir, &format!("{GOOD}regressions: {{ flsh: 1 % }}\n")).unwrap_err();
        assert!(err.contains("unknown field `flsh`"), "{err}");
    }

    #[test]
    fn stack_static_budget_is_sound_unless_the_scenario_says_otherwise() {
        let dir = fixture_dir();
        assert_eq!(load(&dir, GOOD).unwrap().stack_static_budget, StackStaticBudget::Sound);
        let s = load(&dir, &format!("{GOOD}stack-static-budget: excluding-panic\n")).unwrap();
        assert_eq!(s.stack_static_budget, StackStaticBudget::ExcludingPanic);
        let err = load(&dir, &format!("{GOOD}stack-static-budget: no-panic\n")).unwrap_err();
        assert!(err.contains("stack-static-budget") && err.contains("excluding-panic"), "{err}");
    }

    #[test]
    fn board_timing_profiles_and_model_keys() {
        let dir = fixture_dir();
        let base = "name: t\nfirmware: { cargo: fw }\nboards: [netduinoplus2, mps2-an386]\n";
        let s = load(
            &dir,
            &format!(
                "{base}timing: stm32f407\nmodel: {{ branch-refill: 2 }}\n\
                 profiles:\n  speed: {{ opt-level: 3 }}\n  slow: {{ model: {{ clock: 24 MHz, icache: off }} }}\n"
            ),
        )
        .unwrap();
        let board = Board::find("netduinoplus2").unwrap();
        let speed = s.measure("speed").model_for(board);
        assert_eq!(speed.clock_hz, Some(168_000_000));
        assert_eq!(speed.params.branch_refill, 2);
        assert_eq!(speed.memory.flash[0].start, 0x0800_0000, "the profile's flash binds to the board's FLASH");
        assert_eq!(speed.memory.flash[0].wait_states, 5);
        assert_eq!(speed.effective()["timing"], "stm32f407");
        let slow = s.measure("slow").model_for(board);
        assert_eq!((slow.memory.flash[0].wait_states, slow.memory.icache), (0, None), "24 MHz: 0 WS from the table");
        assert_eq!(s.measure("slow").model_for(Board::find("mps2-an386").unwrap()).memory.flash[0].start, 0);

        // One profile per board: the board not named runs its core's model alone.
        let s = load(&dir, &format!("{base}timing: {{ netduinoplus2: stm32f407 }}\n")).unwrap();
        assert_eq!(s.measure("release").model_for(board).profile.as_deref(), Some("stm32f407"));
        let other = s.measure("release").model_for(Board::find("mps2-an386").unwrap());
        assert_eq!((other.profile, other.clock_hz), (None, None));

        // Bad input: the file, the key and (from the YAML layer) the line.
        for (yaml, want) in [
            ("model: { clock: 0 MHz }\n", "s.yaml:4:"),
            ("model: { clock: 0 MHz }\n", "impossible"),
            ("model: { flash: { wait-states: -1 } }\n", "cannot be negative"),
            ("model: { flash: { wait-states: -1 } }\n", "model.flash: `wait-states`"),
            ("model: { refill: 2 }\n", "unknown field `refill`"),
            ("model: { branch-refill: 99 }\n", "must be 0 to 16"),
            ("model: { icache: { size: 1000, ways: 2, line: 16 } }\n", "sets"),
            ("timing: stm32f999\n", "unknown board timing profile `stm32f999`"),
            ("timing: stm32h563\n", "Cortex-M33 part"),
            ("timing: { mps2-an386: stm32h563 }\n", "Cortex-M33 part"),
            ("timing: { mps2-an505: stm32h563 }\n", "`mps2-an505` is not one of this scenario's boards"),
            ("timing: { mps2-an386: stm32f999 }\n", "unknown board timing profile `stm32f999`"),
            ("model: { flash: { wait-states: 1 }, icache: { size: 8 MiB, ways: 2, line: 16 } }\n", "larger than"),
            ("model: { icache: { size: 1 KiB, ways: 2, line: 16 } }\n", "give `model.flash` too"),
            ("timing: stm32f407\nwait-states: [{ start: 0, end: 4 }]\n", "not also as `wait-states`"),
            ("timing: stm32f407\nmodel: { clock: 200 MHz }\n", "at most 168 MHz"),
            // Checks that need the board (after parsing) still point at the key.
            (
                "model: { flash: { wait-states: 1 }, icache: { size: 8 MiB, ways: 2, line: 16 } }\n",
                "s.yaml:4:37: model.icache",
            ),
            (
                "model:\n  flash: { wait-states: 1 }\n  icache: { size: 8 MiB, ways: 2, line: 16 }\n",
                "s.yaml:6:3: model.icache",
            ),
            ("timing: { mps2-an386: stm32h563 }\n", "s.yaml:4:11: timing: profile"),
            ("timing: stm32f407\nmodel: { clock: 200 MHz }\n", "s.yaml:5:10: model.clock"),
            (
                "timing: stm32f407\nmodel: { clock: 24 MHz }\nprofiles:\n  fast: { model: { clock: 200 MHz } }\n",
                "s.yaml:7:20: profiles.fast.model.clock",
            ),
        ] {
            let err = load(&dir, &format!("{base}{yaml}")).unwrap_err();
            assert!(err.contains(want) && err.contains("s.yaml"), "{yaml}: {err}");
        }
    }

    #[test]
    fn per_board_budgets_override_the_scenario_and_profile_and_name_unknown_boards() {
        let dir = fixture_dir();
        let yaml = GOOD.replace(
            "budgets:\n",
            "budgets:\n  cycles: { crc32: 5000 }\n  time: { ed25519/boot: 30 ms }\n  boards:\n    \
             microbit: { stack: 1 KiB, cycles: { crc32: 9000 }, time: { ed25519/boot: 200 ms } }\n",
        ) + "timing: { mps2-an386: stm32f407 }\ntable: { kind: secure-boot, clock: 64 MHz }\n";
        let s = load(&dir, &yaml).unwrap();
        let size = s.profiles.iter().find(|p| p.name == "size").unwrap();
        let m = s.measure("size");
        // The other board keeps the scenario's and the profile's limits.
        let (bytes, regions) = m.budgets_for("mps2-an386", &size.budgets);
        assert_eq!((bytes.flash, bytes.stack), (Some(Bytes(16 * 1024)), s.profiles[0].budgets.stack));
        assert_eq!((regions.cycles["crc32"], regions.time["ed25519/boot"].0), (5000, 30_000));
        // The named board: its own limits on top, key by key.
        let (bytes, regions) = m.budgets_for("microbit", &size.budgets);
        assert_eq!((bytes.flash, bytes.stack), (Some(Bytes(16 * 1024)), Some(Bytes(1024))));
        assert_eq!((regions.cycles["crc32"], regions.time["ed25519/boot"].0), (9000, 200_000));

        // Bad input: an unknown board names the file, the line and column of the key, and the
        // scenario's boards; nesting and per-profile `boards` are refused.
        let bad = yaml.replace("    microbit: {", "    mps2-an505: {");
        let err = load(&dir, &bad).unwrap_err();
        assert!(
            err.contains(
                "s.yaml:11:5: budgets.boards: `mps2-an505` is not one of this scenario's boards (mps2-an386, microbit)"
            ),
            "{err}"
        );
        let flow = GOOD.replace("budgets:\n", "budgets:\n  boards: { mps2-an500: { stack: 1 KiB } }\n");
        let err = load(&dir, &flow).unwrap_err();
        assert!(err.contains("s.yaml:8:13: budgets.boards: `mps2-an500` is not one of"), "{err}");
        let nested = GOOD.replace("budgets:\n", "budgets:\n  boards: { microbit: { boards: { microbit: {} } } }\n");
        assert!(load(&dir, &nested).unwrap_err().contains("`boards` cannot nest"));
        let in_profile =
            GOOD.replace("budgets: { flash: 16 KiB }", "budgets: { boards: { microbit: { flash: 8 KiB } } }");
        assert!(
            load(&dir, &in_profile)
                .unwrap_err()
                .contains("profiles.size.budgets.boards.microbit: per-board budgets go in")
        );
        // A board's time budget needs that board's clock (or the table's).
        let unclocked = GOOD.replace("budgets:\n", "budgets:\n  boards: { microbit: { time: { x: 1 ms } } }\n");
        assert!(load(&dir, &unclocked).unwrap_err().contains("budgets.boards.microbit.time: `x` needs a clock"));
    }

    #[test]
    fn regions_wait_states_stack_probe_and_region_budgets() {
        let dir = fixture_dir();
        let yaml = format!(
            "{GOOD}regions: [crc32, \"kat::block\"]\nstack-probe: true\n\
             wait-states: [{{ start: 0x0, end: 0x400000, fetch: 1, data: 1 }}]\n"
        )
        .replace("flash: 24 KiB", "flash: 24 KiB\n  cycles: { crc32: 5000, \"sha3-256/empty\": 9000 }\n  instructions: { crc32: 3000 }")
        .replace(
            "speed: { opt-level: 3 }",
            "speed: { opt-level: 3, wait-states: [{ start: 0, end: 0x1000, fetch: 2 }], budgets: { cycles: { crc32: 4000 } } }",
        );
        let s = load(&dir, &yaml).unwrap();
        assert_eq!(s.regions, [RegionSpec::named("crc32"), RegionSpec::named("kat::block")]);
        assert!(s.stack_probe);
        let speed = s.measure("speed");
        assert_eq!(speed.wait_states, [WaitStates { start: 0, end: 0x1000, fetch: 2, data: 0 }]);
        assert_eq!(speed.region_budgets.cycles["crc32"], 4000);
        assert_eq!(speed.region_budgets.cycles["sha3-256/empty"], 9000);
        assert_eq!(speed.region_budgets.instructions["crc32"], 3000);
        let size = s.measure("size");
        assert_eq!(size.wait_states, [WaitStates { start: 0, end: 0x40_0000, fetch: 1, data: 1 }]);
        assert_eq!(size.region_budgets.cycles["crc32"], 5000);
        assert_eq!(s.profiles[0].budgets.flash, Some(Bytes(24 * 1024)), "byte budgets still apply");
        let plain = load(&dir, GOOD).unwrap();
        assert!(plain.regions.is_empty() && !plain.stack_probe);
        let measure = plain.measure("speed");
        assert_eq!(Measure { models: IndexMap::new(), ..measure }, Measure::default());

        let err = load(&dir, &format!("{GOOD}wait-states: [{{ start: 0x100, end: 0x100 }}]\n")).unwrap_err();
        assert!(err.contains("wait-states: range 0x100..0x100 is empty"), "{err}");
        let err = load(&dir, &format!("{GOOD}wait-states: [{{ start: 0, end: 1, fech: 1 }}]\n")).unwrap_err();
        assert!(err.contains("unknown field `fech`"), "{err}");
        let err = load(&dir, &format!("{GOOD}regions: [crc32, crc32]\n")).unwrap_err();
        assert!(err.contains("`crc32` is listed twice"), "{err}");
        // Objects: bytes per call and a split; argument registers are refused on QEMU 7.2.
        let s = load(&dir, &format!("{GOOD}regions: [crc32, {{ name: sha256_update, bytes: 1024, split: caller }}]\n"))
            .unwrap();
        assert_eq!(
            s.regions[1],
            RegionSpec {
                bytes: Some(RegionBytes::PerCall(1024)),
                split: Some(Split::Caller),
                ..RegionSpec::named("sha256_update")
            }
        );
        let s = load(&dir, &format!("{GOOD}regions: [crc32, {{ name: aes_ctr, bytes: arg2 }}]\n")).unwrap();
        assert_eq!(s.regions[1].bytes, Some(RegionBytes::Argument(2)), "checked against the QEMU at run time");
        let err = load(&dir, &format!("{GOOD}regions: [crc32, {{ name: f, bytes: 0 }}]\n")).unwrap_err();
        assert!(err.contains("s.yaml:12:18: regions[1]: `bytes: 0`: give the bytes each call processes"), "{err}");
        let err = load(&dir, &format!("{GOOD}regions: [{{ name: f, splt: caller }}]\n")).unwrap_err();
        assert!(err.contains("regions[0]: unknown field `splt`"), "{err}");
        let err = load(&dir, &GOOD.replace("ram: 4096", "ram: 4096\n  cycle: { a: 1 }")).unwrap_err();
        assert!(err.contains("unknown field `cycle`"), "{err}");
    }

    #[rstest::rstest]
    #[case("512 B", 512)]
    #[case("24 KiB", 24 * 1024)]
    #[case("1 MiB", 1024 * 1024)]
    #[case("4096", 4096)]
    fn sizes_parse(#[case] text: &str, #[case] bytes: u64) {
        assert_eq!(Bytes::parse(text), Ok(Bytes(bytes)));
    }
}
