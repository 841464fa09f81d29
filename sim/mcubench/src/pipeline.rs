//! Runs a scenario: build every board × profile, run each ELF under QEMU, analyze it, judge it and
//! gate it. Builds go one at a time (cargo already uses every core); QEMU runs go in parallel,
//! and the report keeps the scenario's order whatever order they finish in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcubench_elf::{ElfImage, MemoryReport};
use mcubench_wire::{PluginArgs, Results};

use crate::config::board::Board;
use crate::build::{self, CargoFirmware};
use crate::gate::{self, Measured};
use crate::exec::plugin;
use crate::judge::protocol::Transcript;
use crate::exec::{contain, qemu};
use sha2::{Digest, Sha256};

use crate::report::{
    CellReport, CountSource, KatReport, PerCall, RegionReport, RunReport, SCHEMA, StackProbe, StaticStack,
};
use crate::config::scenario::{Firmware, Profile, Scenario};
use crate::shard::Shard;
use crate::stack_annotations::Ignored;
use crate::judge::verdict::{self, Outcome, Verdict};

/// How many symbols the memory report lists.
pub const TOP_SYMBOLS: usize = 10;

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// QEMU processes at once.
    pub jobs: usize,
    /// Progress lines on stderr.
    pub progress: bool,
    /// Run only this shard of the board × profile matrix.
    pub shard: Option<Shard>,
    /// Show progress as a bar (for a terminal) instead of lines.
    pub progress_bar: bool,
    /// Run QEMU contained (the default: host file access and commands refused and reported; see
    /// contain.rs). Off only for trusted firmware.
    pub contain: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            progress: false,
            shard: None,
            progress_bar: false,
            contain: true,
        }
    }
}

/// One board × profile of the scenario, with the ELF to run or why there is none.
struct Cell<'a> {
    /// Position in the scenario's board × profile matrix.
    index: usize,
    board: &'static Board,
    profile: &'a Profile,
    elf: Result<PathBuf, Verdict>,
}

fn setup_error(message: impl Into<String>) -> Verdict {
    Verdict { outcome: Outcome::SetupError, message: message.into() }
}

pub fn run_scenario(scenario: &Scenario, options: &RunOptions) -> RunReport {
    // On a terminal: one progress bar. Elsewhere (CI logs, pipes): plain lines, never a bar.
    let bar = options.progress_bar.then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {wide_msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar
    });
    let say = |msg: String| match &bar {
        Some(bar) => bar.set_message(msg),
        None if options.progress => eprintln!("mcubench: {msg}"),
        None => {}
    };
    // The board-major matrix, numbered before sharding so every shard agrees on the numbers.
    let matrix: Vec<(usize, &'static Board, &Profile)> = scenario
        .boards
        .iter()
        .flat_map(|b| scenario.profiles.iter().map(move |p| (*b, p)))
        .enumerate()
        .map(|(index, (board, profile))| (index, board, profile))
        .filter(|(index, _, _)| options.shard.is_none_or(|s| s.contains(*index)))
        .collect();
    let mut cells = Vec::new();
    match &scenario.firmware {
        Firmware::Elf { path } => {
            for (index, board, profile) in matrix {
                cells.push(Cell { index, board, profile, elf: Ok(path.clone()) });
            }
        }
        Firmware::Cargo { package_dir, bin, features } => {
            let firmware = CargoFirmware { package_dir, bin, features };
            let target_root = build::target_directory(package_dir).map_err(|e| setup_error(e.to_string()));
            // Boards with the same target and memory layout share one ELF per profile.
            let mut built: BTreeMap<(&str, &str, &str), Result<PathBuf, Verdict>> = BTreeMap::new();
            for (index, board, profile) in matrix {
                let key = (board.rust_target, board.memory_layout, profile.name.as_str());
                let elf = built
                    .entry(key)
                    .or_insert_with(|| {
                        say(format!(
                            "building {bin} for {} ({}, profile {})",
                            board.name, board.rust_target, profile.name
                        ));
                        let root = target_root.clone()?;
                        build::build(&firmware, &root, board, profile).map_err(|e| setup_error(e.to_string()))
                    })
                    .clone();
                cells.push(Cell { index, board, profile, elf });
            }
        }
    }

    if let Some(bar) = &bar {
        bar.set_length(cells.len() as u64);
    }
    let results: Vec<Mutex<Option<CellReport>>> = cells.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.clamp(1, cells.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(cell) = cells.get(i) else { break };
                    say(format!("running {} / {}", cell.board.name, cell.profile.name));
                    let report = run_cell(cell, scenario, options.contain);
                    *results[i].lock().expect("no panics while holding") = Some(report);
                    if let Some(bar) = &bar {
                        bar.inc(1);
                    }
                }
            });
        }
    });

    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    RunReport {
        schema: SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        scenario: scenario.name.clone(),
        cells: results.into_iter().map(|m| m.into_inner().expect("not poisoned").expect("every cell ran")).collect(),
    }
}

fn run_cell(cell: &Cell<'_>, scenario: &Scenario, contained: bool) -> CellReport {
    let board = cell.board;
    let mut report = CellReport {
        index: cell.index,
        board: board.name.into(),
        core: board.core,
        profile: cell.profile.name.clone(),
        elf: None,
        elf_sha256: None,
        toolchain: Vec::new(),
        verdict: setup_error(""),
        instructions_per_tick: board.instructions_per_tick(),
        cycle_model: None,
        kats: Vec::new(),
        stack_high_water: None,
        heap_peak: None,
        stack_static: None,
        memory: None,
        budgets: Vec::new(),
        regions: Vec::new(),
        stack_probe: None,
        annotations_ignored: Vec::new(),
    };
    let measure = scenario.measure(&cell.profile.name);
    let gate = |report: &mut CellReport| {
        report.budgets = gate::check(
            &cell.profile.budgets,
            Measured {
                flash: report.flash_bytes(),
                ram: report.ram_bytes(),
                stack: report.stack_high_water.map(u64::from),
                stack_static: report.stack_static.as_ref().and_then(|s| s.reset).map(u64::from),
                heap: report.heap_peak.map(u64::from),
            },
        );
        // Cycles/instructions per function region (its most expensive call) or KAT operation.
        let lookup = |name: &str| -> Option<gate::Counts> {
            if let Some(r) = report.regions.iter().find(|r| r.name == name) {
                return Some((r.cycles.map(|c| c.max), (r.calls > 0).then_some(r.instructions.max)));
            }
            report.kats.iter().find(|k| k.id == name).map(|k| (k.cycles, Some(k.instructions)))
        };
        let regions = gate::check_regions(&measure.region_budgets, &lookup);
        report.budgets.extend(regions);
    };
    let elf = match &cell.elf {
        Ok(path) => path,
        Err(verdict) => {
            report.verdict = verdict.clone();
            gate(&mut report);
            return report;
        }
    };
    report.elf = elf.file_name().map(|n| n.to_string_lossy().into_owned());
    let image = match load_runnable(elf, board) {
        Ok(image) => image,
        Err(verdict) => {
            report.verdict = verdict;
            gate(&mut report);
            return report;
        }
    };
    report.memory = Some(MemoryReport::analyze(&image, Some(&board.regions()), TOP_SYMBOLS));
    report.elf_sha256 = std::fs::read(elf).ok().map(|bytes| hex(&Sha256::digest(&bytes)));
    report.toolchain = crate::analyze::toolchain(&image);
    let (stack_static, ignored) = static_stack(&image, board, &scenario.source);
    report.stack_static = Some(stack_static);
    report.annotations_ignored = ignored;

    // The TCG plugin (exact instruction counts at region markers), unless disabled.
    let so = match plugin::locate() {
        Ok(so) => so,
        Err(e) => {
            report.verdict = setup_error(e);
            gate(&mut report);
            return report;
        }
    };
    let markers = match so.as_ref().map(|_| plugin::find_markers(&image)).transpose() {
        Ok(m) => m.flatten(),
        Err(e) => {
            report.verdict = setup_error(format!("{}: {e}", elf.display()));
            gate(&mut report);
            return report;
        }
    };
    let scratch = match ScratchDir::new() {
        Ok(dir) => dir,
        Err(e) => {
            report.verdict = setup_error(format!("cannot create a scratch directory for the QEMU plugin: {e}"));
            gate(&mut report);
            return report;
        }
    };
    let results_file = scratch.0.join("plugin-results.txt");
    // Function regions and the stack probe need the plugin.
    if so.is_none() && (!scenario.regions.is_empty() || scenario.stack_probe) {
        report.verdict = setup_error(format!(
            "the scenario's `regions` and `stack-probe` need the QEMU plugin, which {}=off disabled",
            plugin::ENV
        ));
        gate(&mut report);
        return report;
    }
    // Function regions: the ELF's functions for the plugin's shadow stack, the named ones marked.
    let functions_file = scratch.0.join("functions.txt");
    let functions = if scenario.regions.is_empty() {
        None
    } else {
        let table = plugin::function_table(&image);
        let elf_name = report.elf.clone().unwrap_or_default();
        let written = plugin::resolve_regions(&table, &scenario.regions, &elf_name).and_then(|regions| {
            std::fs::write(&functions_file, plugin::functions_file(&table, &regions))
                .map_err(|e| format!("cannot write {}: {e}", functions_file.display()))
        });
        if let Err(e) = written {
            report.verdict = setup_error(e);
            gate(&mut report);
            return report;
        }
        Some(functions_file)
    };
    let probe = if scenario.stack_probe {
        match plugin::stack_probe_range(&image) {
            Some(p) => Some(p),
            None => {
                report.verdict =
                    setup_error(format!("{}: no vector table, so no initial SP for the stack probe", elf.display()));
                gate(&mut report);
                return report;
            }
        }
    } else {
        None
    };
    // Cycle estimates with the board's core model (mps2-an500's Cortex-M7 model is approximate and
    // says so in `cycle_model`), with the scenario's wait states.
    let args = PluginArgs {
        out: results_file.clone(),
        markers,
        core: Some(board.core),
        functions,
        profile: false,
        wait_states: measure.wait_states.clone(),
        stack_probe: probe.clone(),
        handlers: plugin::exception_handlers(&image),
    };
    let option = so.as_ref().map(|so| args.to_option(so));

    // Contained: semihosting's host file access and commands are refused and reported; see
    // contain.rs. Uncontained (trusted firmware): QEMU serves them from the host.
    let outcome = if contained {
        contain::run_contained_plugin(board, elf, scenario.timeout, option.as_deref()).map(|c| (None, Some(c)))
    } else {
        qemu::run_plugin(board, elf, scenario.timeout, option.as_deref()).map(|run| (Some(run), None))
    };
    let (native_run, contained_run) = match outcome {
        Ok(pair) => pair,
        Err(e) => {
            report.verdict = setup_error(e.to_string());
            gate(&mut report);
            return report;
        }
    };
    let run = contained_run.as_ref().map(|c| &c.run).or(native_run.as_ref()).expect("one of the runners ran");
    let results = so.is_some().then(|| plugin::read_results(&results_file));
    drop(scratch);

    let transcript = Transcript::parse(&run.stdout);
    let symbolize = |pc: u32| match image.symbolize(u64::from(pc)) {
        Some((name, off)) => format!("{name}+0x{off:x}"),
        None => "no symbol".to_string(),
    };
    report.verdict = match &contained_run {
        Some(c) => contain::judge(c, transcript.as_ref(), scenario.timeout.as_secs_f64(), &symbolize),
        None => verdict::judge(run, transcript.as_ref(), scenario.timeout.as_secs_f64(), &symbolize),
    };
    if let Some(vectors) = &scenario.vectors {
        report.verdict = verdict::check_vectors(report.verdict.clone(), transcript.as_ref(), vectors);
    }
    if let Some(line) = run.stderr.lines().find(|l| l.starts_with("mcubench-qemu-plugin: error:")) {
        // The plugin refused to run (wrong QEMU, bad arguments): nothing else QEMU did counts.
        report.verdict = setup_error(format!("{line} (QEMU: {})", run.command));
    }
    // A run that passed must have complete plugin results; after a timeout, fault or lockup
    // they are missing by nature and the verdict already says why.
    let results = match results {
        Some(Err(e)) => {
            if report.verdict.outcome == Outcome::Pass {
                report.verdict = setup_error(e);
            }
            None
        }
        Some(Ok(r)) => {
            // The model, or why there are no cycle numbers (never a made-up number).
            report.cycle_model = r.cycles.as_ref().map(|c| match &c.total {
                Ok(_) => c.model.clone(),
                Err(reason) => format!("unavailable: {reason} ({})", c.model),
            });
            if report.verdict.outcome == Outcome::Pass && !r.errors.is_empty() {
                report.verdict = Verdict {
                    outcome: Outcome::Fail,
                    message: format!(
                        "region markers misused: {}; every mcubench_region_exit must match the innermost open region",
                        r.errors.join("; ")
                    ),
                };
            }
            Some(r)
        }
        None => None,
    };
    if let Ok(t) = &transcript {
        let mut problems = Vec::new();
        report.kats = t
            .kats()
            .map(|k| {
                let (exact, cycles) = match (k.region, &results, markers.is_some()) {
                    (Some(id), Some(r), true) => match r.single_activation(id) {
                        Ok(n) => (Some(n), r.single_activation_cycles(id).ok().flatten()),
                        Err(e) => {
                            problems.push(format!("kat {}: {e}", k.id));
                            (None, None)
                        }
                    },
                    _ => (None, None),
                };
                let stack_lowest = match (k.region, &results, exact) {
                    (Some(id), Some(r), Some(_)) => r.regions.get(&id).and_then(|s| s.stack_low),
                    _ => None,
                };
                KatReport {
                    id: k.id.clone(),
                    alg: k.alg.clone(),
                    op: k.op.clone(),
                    result: k.result.clone(),
                    instructions: exact.unwrap_or_else(|| board.ticks_to_instructions(k.ticks)),
                    instructions_source: if exact.is_some() { CountSource::Plugin } else { CountSource::Systick },
                    cycles,
                    ticks: k.ticks,
                    stack: k.stack,
                    stack_lowest,
                    heap: k.heap,
                }
            })
            .collect();
        if report.verdict.outcome == Outcome::Pass && !problems.is_empty() {
            report.verdict = Verdict { outcome: Outcome::Fail, message: problems.join("; ") };
        }
        report.stack_high_water = t.end().map(|e| e.stack);
        report.heap_peak = t.end().and_then(|e| e.heap);
    }
    if let Some(r) = &results {
        report.regions = function_regions(&scenario.regions, r);
        if let (Some(p), Some(low)) = (&probe, r.probe) {
            report.stack_probe = Some(StackProbe { lowest: low, bytes: low.map_or(0, |l| p.hi.saturating_sub(l)) });
        }
    }
    gate(&mut report);
    report
}

/// The function regions of a results file, in the scenario's order (a region never called has
/// zero calls).
fn function_regions(names: &[String], r: &Results) -> Vec<RegionReport> {
    names
        .iter()
        .enumerate()
        .map(|(id, name)| {
            let s = r.functions.get(&(id as u32)).cloned().unwrap_or_default();
            RegionReport {
                name: name.clone(),
                calls: s.completed,
                open: s.entries.saturating_sub(s.completed),
                instructions: PerCall { total: s.total, min: s.min, max: s.max },
                cycles: s.cycles.map(|(total, min, max)| PerCall { total, min, max }),
                stack_lowest: s.stack_low,
            }
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The static bound with the scenario's annotation file (`kat.yaml` → `kat.stack.yaml`) when
/// it has one, and the annotation entries this ELF has no function for. Never fails the run: an
/// analysis problem is reported as an unbounded result.
fn static_stack(image: &ElfImage, board: &Board, scenario_source: &Path) -> (StaticStack, Vec<Ignored>) {
    use mcubench_elf::stack::Bound;
    let annotations = crate::stack_annotations::path_for_scenario(scenario_source);
    let annotations = annotations.is_file().then_some(annotations.as_path());
    match crate::analyze::stack::analyze(image, board, annotations) {
        Err(e) => (StaticStack { kind: "unbounded".into(), reset: None, msp: None, note: e }, Vec::new()),
        Ok((report, ignored)) => {
            let reset = report.roots.iter().find(|r| r.role == "reset");
            let (kind, note) = match reset.map(|r| &r.bound) {
                None => ("unbounded", "no reset handler in the vector table".to_string()),
                Some(Bound::Exact { .. }) => ("exact", String::new()),
                Some(Bound::Bounded { assumptions, .. }) => {
                    ("bounded", format!("{} assumption(s); see `mcubench stack`", assumptions.len()))
                }
                Some(Bound::Unbounded { reason }) => ("unbounded", reason.clone()),
            };
            let bound = StaticStack {
                kind: kind.into(),
                reset: reset.and_then(|r| r.bound.bytes()),
                msp: report.msp.bytes(),
                note,
            };
            (bound, ignored)
        }
    }
}

/// Loads the ELF and refuses what cannot run on `board`, before QEMU is started.
fn load_runnable(elf: &Path, board: &Board) -> Result<ElfImage, Verdict> {
    let image = ElfImage::read(elf).map_err(|e| setup_error(e.to_string()))?;
    if !image.has_code() {
        return Err(setup_error(format!(
            "{}: the ELF has no code or no vector table; if it was built with RUSTFLAGS set, the firmware's `-Tlink.x` was dropped (unset RUSTFLAGS and rebuild)",
            elf.display()
        )));
    }
    let flash = board.flash.0..board.flash.0 + board.flash.1;
    if let Some(vt) = image.vector_table()
        && !flash.contains(&vt.address)
    {
        return Err(setup_error(format!(
            "{}: the vector table is at 0x{:08x}, outside {}'s flash 0x{:08x}..0x{:08x}; was it linked for another board?",
            elf.display(),
            vt.address,
            board.name,
            flash.start,
            flash.end
        )));
    }
    Ok(image)
}

/// A fresh, private directory for one QEMU run's plugin results, removed on drop. Unique per
/// process and run, so parallel runs never share (or inherit) a results file.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> std::io::Result<ScratchDir> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("mcubench-run-{}-{n}", std::process::id()));
        // A leftover from an earlier process with the same pid must not be read as ours.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir)?;
        Ok(ScratchDir(dir))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
