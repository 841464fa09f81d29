//! Runs a scenario: build every board × profile, run each ELF under QEMU, analyze it, judge it and
//! gate it. Builds go one at a time (cargo already uses every core); QEMU runs go in parallel,
//! and the report keeps the scenario's order whatever order they finish in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use mcubench_elf::{ElfImage, MemoryReport};
use mcubench_wire::{PluginArgs, Results};

use crate::build::ElfSource;
use crate::config::board::Board;
use crate::config::rules::ExitRule;
use crate::exec::plugin;
use crate::exec::scratch::ScratchDir;
use crate::exec::version::QemuInfo;
use crate::exec::{self, Launch};
use crate::gate::{self, Measured};
use crate::judge::console;
use crate::judge::protocol::Transcript;
use sha2::{Digest, Sha256};

use crate::config::scenario::{CycleCounter, Profile, RegionSpec, Scenario, StackStaticBudget};
use crate::judge::verdict::{self, Outcome, Verdict};
use crate::report::{
    self, CellReport, CountSource, CounterInterval, KatReport, PerCallTime, RegionReport, RunReport, SCHEMA,
    StackProbe, StaticStack,
};
use crate::shard::Shard;
use mcubench_stack::annotations::Ignored;

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
    /// The QEMU executable (default: `MCUBENCH_QEMU`, else `qemu-system-arm` on PATH); its version
    /// picks the plugin build and goes into each cell's report.
    pub qemu: PathBuf,
    /// Also write each cell's run trace into this directory (`cell-<index>.trace`), for pricing
    /// the runs again with other model parameters ([`crate::replay`]; `mcubench calibrate`).
    pub trace: Option<PathBuf>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            progress: false,
            shard: None,
            progress_bar: false,
            contain: true,
            qemu: exec::version::program().to_path_buf(),
            trace: None,
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
    let source = ElfSource::new(&scenario.firmware).map_err(|e| setup_error(e.to_string()));
    // Which QEMU, its version and the plugin build it needs: asked once, before any cell runs.
    let qemu = exec::version::probe(&options.qemu);
    // Boards with the same target and memory layout share one ELF per profile. Each ELF is built
    // by the first worker that needs it (the others wait for it), so builds overlap with each
    // other and with the runs of cells whose ELF is ready.
    let key = |board: &'static Board, profile: &Profile| (board.rust_target, board.layout.name, profile.name.clone());
    let builds: BTreeMap<_, OnceLock<Result<PathBuf, Verdict>>> =
        matrix.iter().map(|(_, board, profile)| (key(board, profile), OnceLock::new())).collect();
    let elf_for = |board: &'static Board, profile: &Profile| -> Result<PathBuf, Verdict> {
        builds[&key(board, profile)]
            .get_or_init(|| {
                let source = source.as_ref().map_err(Clone::clone)?;
                if let ElfSource::Cargo { firmware, .. } = source {
                    say(format!(
                        "building {} for {} ({}, profile {})",
                        firmware.bin, board.name, board.rust_target, profile.name
                    ));
                }
                source.elf(board, profile).map_err(|e| setup_error(e.to_string()))
            })
            .clone()
    };

    if let Some(bar) = &bar {
        bar.set_length(matrix.len() as u64);
    }
    let results: Vec<Mutex<Option<CellReport>>> = matrix.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..options.jobs.clamp(1, matrix.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(index, board, profile)) = matrix.get(i) else { break };
                    let cell = Cell { index, board, profile, elf: elf_for(board, profile) };
                    say(format!("running {} / {}", cell.board.name, cell.profile.name));
                    let report = run_cell(&cell, scenario, options, &qemu);
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
        table: scenario.table.clone(),
        cells: results.into_iter().map(|m| m.into_inner().expect("not poisoned").expect("every cell ran")).collect(),
    }
}

/// Runs one cell through every stage; whatever stage stops it, the cell is gated and reported.
fn run_cell(cell: &Cell<'_>, scenario: &Scenario, options: &RunOptions, qemu: &Result<QemuInfo, String>) -> CellReport {
    let mut report = CellReport::unrun(cell.index, cell.board, &cell.profile.name);
    report.verdict = match measure_cell(&mut report, cell, scenario, options, qemu) {
        Ok(verdict) | Err(verdict) => verdict,
    };
    gate_cell(&mut report, cell, scenario);
    report
}

/// Budgets and region limits against what the cell measured (a limit on something the cell
/// did not measure is `unknown`, never `ok`).
fn gate_cell(report: &mut CellReport, cell: &Cell<'_>, scenario: &Scenario) {
    let measure = scenario.measure(&cell.profile.name);
    // The profile's budgets with the board's own (`budgets.boards`) on top.
    let (budgets, region_budgets) = measure.budgets_for(cell.board.name, &cell.profile.budgets);
    report.budgets = gate::check(
        &budgets,
        Measured {
            flash: report.flash_bytes(),
            ram: report.ram_bytes(),
            stack: report.stack_high_water.map(u64::from),
            stack_static: report
                .stack_static
                .as_ref()
                .and_then(|s| match scenario.stack_static_budget {
                    StackStaticBudget::Sound => s.reset,
                    StackStaticBudget::ExcludingPanic => s.excluding_panic.as_ref().and_then(|x| x.reset),
                })
                .map(u64::from),
            heap: report.heap_peak.map(u64::from),
        },
    );
    // Cycles/instructions per function region (its most expensive call), KAT operation or pair
    // of DWT cycle-counter accesses (its longest interval).
    let lookup = |name: &str| -> Option<gate::Counts> {
        if let Some(r) = report.regions.iter().find(|r| r.name == name) {
            return Some((r.cycles.map(|c| c.max), (r.calls > 0).then_some(r.instructions.max)));
        }
        if let Some(k) = report.kats.iter().find(|k| k.id == name) {
            return Some((k.cycles, Some(k.instructions)));
        }
        let i = report.cycle_counter.iter().find(|i| i.name() == name)?;
        Some((report.cycle_model.is_some().then_some(i.cycles.max), Some(i.instructions.max)))
    };
    let totals = gate::Totals {
        cycles: report.cycles_total,
        instructions: report.instructions_total,
        metrics: Some(&report.metrics),
        // The cell's clock (board timing profile or model.clock) when it has one, as the table's
        // time column; else the table's stated clock.
        clock_hz: report.clock_hz.or(scenario.table.as_ref().and_then(|t| t.clock_hz)),
    };
    let mut regions = gate::check_regions(&region_budgets, &lookup, totals);
    // A limit on a pair of counter accesses the run does not have: name the pairs it has.
    let pairs: Vec<String> = report.cycle_counter.iter().map(|i| i.name()).collect();
    for check in regions.iter_mut().filter(|c| c.status == gate::BudgetStatus::Unknown) {
        if check.subject.as_ref().is_some_and(|s| s.contains("..") && !pairs.contains(s)) {
            check.hint = Some(if pairs.is_empty() {
                "the firmware did not access the DWT cycle counter in the run".to_string()
            } else {
                format!("the run's pairs of DWT cycle-counter accesses are {}", pairs.join(", "))
            });
        }
    }
    report.budgets.extend(regions);
    // Cycles per byte: a KAT's cycles over its `bytes=`, or a region's calls' cycles over theirs.
    let per_byte = |name: &str| -> Option<gate::PerByte> {
        if let Some(r) = report.regions.iter().find(|r| r.name == name) {
            return Some((r.cycles.map(|c| c.total), r.bytes));
        }
        report.kats.iter().find(|k| k.id == name).map(|k| (k.cycles, k.bytes))
    };
    let cpb = gate::check_cpb(&region_budgets.cpb, &per_byte);
    report.budgets.extend(cpb);
}

/// Analyzes, runs and judges one cell, filling `report` as far as it gets. `Err` is the verdict
/// of the stage that stopped it (a setup error before QEMU ran); `Ok` the run's verdict.
fn measure_cell(
    report: &mut CellReport,
    cell: &Cell<'_>,
    scenario: &Scenario,
    options: &RunOptions,
    qemu: &Result<QemuInfo, String>,
) -> Result<Verdict, Verdict> {
    let contained = options.contain;
    let board = cell.board;
    let measure = scenario.measure(&cell.profile.name);
    let elf = cell.elf.as_ref().map_err(Clone::clone)?;
    report.elf = elf.file_name().map(|n| n.to_string_lossy().into_owned());

    // Analyze: what the ELF shows without running it.
    let image = load_runnable(elf, board)?;
    report.memory = Some(MemoryReport::analyze(&image, Some(&board.regions()), TOP_SYMBOLS));
    report.elf_sha256 = std::fs::read(elf).ok().map(|bytes| hex(&Sha256::digest(&bytes)));
    report.toolchain = crate::analyze::toolchain(&image);
    let annotations = crate::analyze::stack::annotation_file(&scenario.source, &cell.profile.name);
    let (stack_static, ignored, stack) = static_stack(&image, board, annotations.as_deref());
    report.stack_static = Some(stack_static);
    report.annotations_ignored = ignored;
    if let Some(spec) = &scenario.table {
        report.table_rows = crate::analyze::table::row_facts(spec, &image, stack.as_ref()).map_err(setup_error)?;
    }

    // The QEMU (a supported version), and the build of the TCG plugin (exact instruction counts
    // at region markers) for its plugin API, unless disabled.
    let qemu = qemu.as_ref().map_err(setup_error)?;
    report.qemu = Some(qemu.version.to_string());
    let so = plugin::locate_for(qemu.api).map_err(setup_error)?;
    let markers = so
        .as_ref()
        .map(|_| plugin::find_markers(&image))
        .transpose()
        .map_err(|e| setup_error(format!("{}: {e}", elf.display())))?
        .flatten();
    let scratch = ScratchDir::new()
        .map_err(|e| setup_error(format!("cannot create a scratch directory for the QEMU plugin: {e}")))?;
    let results_file = scratch.path().join("plugin-results.txt");
    // Function regions, the stack probe and the end at a loop need the plugin.
    let loop_end = scenario.verdict.as_ref().is_some_and(|r| r.exit == ExitRule::Loop);
    let live_counter = scenario.cycle_counter == CycleCounter::Estimated;
    if so.is_none() && (!scenario.regions.is_empty() || scenario.stack_probe || loop_end || live_counter) {
        return Err(setup_error(format!(
            "the scenario's `regions`, `stack-probe`, `verdict.exit: loop` and `cycle-counter: estimated` need the \
             QEMU plugin, which {}=off disabled",
            plugin::ENV
        )));
    }
    // `bytes: argN`: the plugin reads the register at each call's entry, which needs register
    // reads (plugin API v2 and later, so the v3 build for QEMU 9.1 to 10.x).
    let region_args = crate::config::regions::region_args(&scenario.regions);
    if let Some((id, register)) = region_args.first()
        && qemu.api == plugin::PluginApi::V1
    {
        return Err(setup_error(format!(
            "regions: `{}`: `bytes: arg{register}` reads the byte count from register r{register} at each call's \
             entry, which needs QEMU 9.1 or later (QEMU plugin API v2 and later can read registers); this is QEMU \
             {} ({}), whose plugin API v1 cannot. Run on QEMU 9.1 to 10.x (set {} or `--qemu`), give the bytes \
             per call as a number (`bytes: 1024`), or have the firmware report `bytes=` on its `kat` record",
            scenario.regions[*id as usize].name,
            qemu.version,
            qemu.path.display(),
            crate::exec::version::ENV,
        )));
    }
    // Function regions: the ELF's functions for the plugin's shadow stack, the named ones marked.
    let functions_file = scratch.path().join("functions.txt");
    let table = if scenario.regions.is_empty() { Vec::new() } else { plugin::function_table(&image) };
    let functions = if scenario.regions.is_empty() {
        None
    } else {
        let elf_name = report.elf.clone().unwrap_or_default();
        let names: Vec<String> = scenario.regions.iter().map(|r| r.name.clone()).collect();
        plugin::resolve_regions(&table, &names, &elf_name)
            .and_then(|regions| {
                std::fs::write(&functions_file, plugin::functions_file(&table, &regions))
                    .map_err(|e| format!("cannot write {}: {e}", functions_file.display()))
            })
            .map_err(setup_error)?;
        Some(functions_file)
    };
    // The stack probe counts stores to the stack region only; without one (a heap shares the
    // memory below the stack and no symbol bounds it) the report says why, and nothing is probed.
    let (probe, probe_note) = match scenario.stack_probe {
        false => (None, String::new()),
        true => match plugin::stack_region(&image) {
            Ok((_, _, from)) => (
                Some(plugin::stack_probe_range(&image).map_err(|e| setup_error(format!("{}: {e}", elf.display())))?),
                format!("stack region from {from} to the initial SP"),
            ),
            Err(e) => {
                report.stack_probe = Some(StackProbe { lowest: None, bytes: None, region: None, note: e });
                (None, String::new())
            }
        },
    };
    // Cycle estimates with the board's core model (mps2-an500's Cortex-M7 model is approximate and
    // says so in `cycle_model`), with the scenario's wait states.
    let model = measure.model_for(board);
    report.cycle_params = model.effective().into_iter().collect();
    report.clock_hz = model.clock_hz;
    if let Some(dir) = &options.trace {
        std::fs::create_dir_all(dir)
            .map_err(|e| setup_error(format!("cannot create {} for the run trace: {e}", dir.display())))?;
    }
    // What the cycle model is given: the same for a live run and a trace replay.
    let priced = crate::replay::ModelArgs::for_cell(scenario, board, &cell.profile.name);
    // The idle loops where the run ends, and the live cycle counter's loads, each served over the
    // gdbstub: found in the code.
    let (idle, counter_loads) = plugin::scanned(&image, priced.core, loop_end, live_counter).map_err(setup_error)?;
    let counter_file = scratch.path().join("cycle-counter.bin");
    let live = (!counter_loads.is_empty()).then_some(exec::LiveCounter { loads: &counter_loads, file: &counter_file });
    let args = PluginArgs {
        out: results_file.clone(),
        markers,
        core: Some(priced.core),
        functions,
        profile: false,
        wait_states: priced.wait_states,
        stack_probe: probe.clone(),
        handlers: plugin::exception_handlers(&image),
        params: priced.params,
        memory: priced.memory,
        region_args,
        trace: options.trace.as_ref().map(|dir| dir.join(format!("cell-{}.trace", cell.index))),
        loop_end,
        counter: live.map(|l| l.file.to_path_buf()),
        idle,
    };
    let option = so.as_ref().map(|so| args.to_option(so));

    // Run: contained (semihosting's host file access and commands refused and reported; see
    // exec/contain.rs) or, for trusted firmware, natively.
    let launch = Launch::new(board, elf, scenario.timeout)
        .with_qemu(&qemu.path)
        .with_plugin(option.as_deref())
        .contained(contained)
        .with_counter(live);
    let execution = exec::execute(&launch).map_err(|e| setup_error(e.to_string()))?;
    // How many loads were served; not for a run cut by the timeout, whose count depends on the
    // machine's speed (reports of the same ELF and scenario are byte-identical).
    report.cycle_counter_served = match &execution.counter {
        Some(Err(e)) => return Err(setup_error(format!("cycle-counter: estimated: {e}"))),
        _ if execution.run.end == exec::ProcessEnd::TimedOut => None,
        Some(Ok(served)) => Some(*served),
        None => live_counter.then_some(0),
    };
    let run = &execution.run;
    let results = so.is_some().then(|| plugin::read_results(&results_file));
    drop(scratch);

    // Judge: the records, QEMU's end, the host's copy of the vectors, the plugin's word.
    let transcript = Transcript::parse(&run.stdout);
    let symbolize = |pc: u32| match image.symbolize(u64::from(pc)) {
        Some((name, off)) => format!("{name}+0x{off:x}"),
        None => "no symbol".to_string(),
    };
    report.console = console::streams(run, transcript.as_ref().ok());
    let looped = results.as_ref().and_then(|r| r.as_ref().ok()).and_then(|r| r.loop_end);
    report.loop_end = looped.map(|pc| format!("0x{pc:08x} ({})", symbolize(pc)));
    let rules = scenario.verdict.as_ref().map(|rules| verdict::Rules { rules, console: &report.console, looped });
    let mut verdict =
        verdict::judge(&execution, transcript.as_ref(), rules, scenario.timeout.as_secs_f64(), &symbolize);
    if let Some(rules) = &scenario.verdict {
        let (metrics, problems) = console::recorded(rules, &report.console);
        report.metrics = metrics;
        if verdict.outcome == Outcome::Pass && !problems.is_empty() {
            verdict = Verdict { outcome: Outcome::Fail, message: problems.join("; ") };
        }
    }
    if let Some(vectors) = &scenario.vectors {
        verdict = verdict::check_vectors(verdict, transcript.as_ref(), vectors);
    }
    // A timeout: where the core was (a contained run asks QEMU's monitor before QEMU goes). In a
    // fault handler that loops, the run faulted.
    let stopped = run.at_timeout.as_deref().and_then(crate::judge::stopped::CoreState::parse);
    let decoder = mcubench_thumb::Decoder::for_core(args.core.unwrap_or(board.core)).ok();
    if verdict.outcome == Outcome::Timeout
        && let Some(s) = &stopped
    {
        verdict = crate::judge::stopped::judge(verdict, s, &image, decoder.as_ref(), &symbolize);
    }
    // A wait on the DWT cycle counter never ends here: say so when the ELF reads it and the core
    // hung in a function that reads it (or where it hung is unknown).
    if verdict.outcome == Outcome::Timeout
        && let Some(decoder) = &decoder
    {
        let readers = crate::analyze::debug_units::cycle_counter_readers(&image, decoder);
        let hung_in = stopped.as_ref().map(|s| image.symbolize(u64::from(s.pc)).map(|(f, _)| f));
        let waiting = match &hung_in {
            None => !readers.is_empty(),
            Some(f) => f.as_ref().is_some_and(|f| readers.contains(f)),
        };
        if waiting {
            let readers = readers.join(", ");
            verdict.message.push_str(&match live_counter {
                false => format!(
                    "; the firmware reads the DWT cycle counter (in {readers}), which stays 0 under QEMU, so a wait on \
                     it never ends; `cycle-counter: estimated` (`--cycle-counter estimated`) makes its loads read the \
                     estimated cycles (see the guide's \"Firmware that times itself with the DWT cycle counter\")"
                ),
                true => format!(
                    "; the firmware reads the DWT cycle counter (in {readers}), whose loads read the estimated cycles \
                     (`cycle-counter: estimated`) but for those the code scan does not find, which read 0; each load \
                     costs about a millisecond here, so a long delay on the counter needs a longer `timeout` (see \
                     the guide's \"Firmware that times itself with the DWT cycle counter\")"
                ),
            });
        }
    }
    // A console through the ITM (printf over SWO) stays empty here: say so when a run that did
    // not pass uses it.
    if matches!(verdict.outcome, Outcome::Fail | Outcome::NoVerdict | Outcome::Timeout)
        && let Some(decoder) = &decoder
    {
        let users = crate::analyze::debug_units::itm_users(&image, decoder);
        if !users.is_empty() {
            verdict.message.push_str(&format!(
                "; the firmware uses the ITM (in {}), which QEMU does not model: its enable registers read 0, so \
                 what it prints there (printf over SWO) never arrives; print through a UART or semihosting in \
                 builds for QEMU",
                users.join(", ")
            ));
        }
    }
    if let Some(line) = run.stderr.lines().find(|l| l.starts_with("mcubench-qemu-plugin: error:")) {
        // The plugin refused to run (wrong QEMU, bad arguments): nothing else QEMU did counts.
        verdict = setup_error(format!("{line} (QEMU: {})", run.command));
    }
    // A run that passed must have complete plugin results; after a timeout, fault or lockup
    // they are missing by nature and the verdict already says why.
    let results = match results {
        Some(Err(e)) => {
            if verdict.outcome == Outcome::Pass {
                verdict = setup_error(e);
            }
            None
        }
        Some(Ok(r)) => {
            // The model, or why there are no cycle numbers (never a made-up number).
            // Whole-run totals only for a run that ended by itself: a killed QEMU wrote none.
            report.instructions_total = Some(r.insns);
            report.cycles_total = r.cycles.as_ref().and_then(|c| c.total.as_ref().ok().copied());
            report.time_total_us = report.time_us(report.cycles_total);
            report.cycle_model = r.cycles.as_ref().map(|c| match &c.total {
                Ok(_) => c.model.clone(),
                Err(reason) => format!("unavailable: {reason} ({})", c.model),
            });
            if verdict.outcome == Outcome::Pass && !r.errors.is_empty() {
                verdict = Verdict {
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
        let problems = kat_reports(report, board, t, results.as_ref(), markers.is_some());
        if verdict.outcome == Outcome::Pass && !problems.is_empty() {
            verdict = Verdict { outcome: Outcome::Fail, message: problems.join("; ") };
        }
        report.stack_high_water = t.end().map(|e| e.stack);
        report.heap_peak = t.end().and_then(|e| e.heap);
    }
    if let Some(r) = &results {
        let caller_of = |addr: u32| plugin::function_at(&table, addr).map(|f| f.name.clone());
        report.regions = function_regions(&scenario.regions, r, &caller_of);
        for region in &mut report.regions {
            region.time_us = PerCallTime::at(region.cycles, report.clock_hz);
        }
        report.cycle_counter =
            CounterInterval::all(&r.intervals, &|pc| image.symbolize(u64::from(pc)), report.clock_hz);
        if let (Some(p), Some(low)) = (&probe, r.probe) {
            report.stack_probe = Some(StackProbe {
                lowest: low,
                bytes: Some(low.map_or(0, |l| p.hi.saturating_sub(l))),
                region: Some([p.lo, p.hi]),
                note: probe_note.clone(),
            });
        }
    }
    if let (Some(trace), Some(r)) = (&args.trace, &results) {
        report.traced = Some(crate::replay::Traced {
            trace: trace.clone(),
            handlers: !args.handlers.is_empty(),
            results: r.clone(),
            kat_regions: transcript
                .as_ref()
                .map(|t| t.kats().filter_map(|k| Some((k.id.clone(), k.region?))).collect())
                .unwrap_or_default(),
            counter_pairs: report.cycle_counter.clone(),
        });
    }
    // The throughput and profile tables' rows are KATs (or, without KAT records, function
    // regions): a row or size the scenario names that the firmware did not measure is an input
    // error, listing what it measured.
    if let Some(spec) = &scenario.table
        && spec.kind != crate::config::table::TableKind::SecureBoot
        && verdict.outcome == Outcome::Pass
        && let Err(e) = crate::report::throughput_table::check(spec, &crate::report::throughput_table::entries(report))
    {
        verdict = setup_error(format!("{}: {e}", scenario.source.display()));
    }
    Ok(verdict)
}

/// The KAT rows of a cell from its records, with exact counts and cycles from the plugin's
/// region results where the firmware marked its KATs; returns what made counts unusable.
fn kat_reports(
    report: &mut CellReport,
    board: &Board,
    t: &Transcript,
    results: Option<&Results>,
    marked: bool,
) -> Vec<String> {
    let mut problems = Vec::new();
    let clock_hz = report.clock_hz;
    report.kats = t
        .kats()
        .map(|k| {
            let (exact, cycles) = match (k.region, results, marked) {
                (Some(id), Some(r), true) => match r.single_activation(id) {
                    Ok(n) => (Some(n), r.single_activation_cycles(id).ok().flatten()),
                    Err(e) => {
                        problems.push(format!("kat {}: {e}", k.id));
                        (None, None)
                    }
                },
                _ => (None, None),
            };
            let (stack_lowest, stack_probe_bytes) = match (k.region, results, exact) {
                (Some(id), Some(r), Some(_)) => {
                    r.regions.get(&id).map_or((None, None), |s| (s.stack_low, probe_bytes(s)))
                }
                _ => (None, None),
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
                stack_probe_bytes,
                heap: k.heap,
                bytes: k.bytes,
                cycles_per_byte: report::per_byte(cycles, k.bytes),
                time_us: report::time_us(cycles, clock_hz),
            }
        })
        .collect();
    problems
}

/// The function regions of a results file, in the scenario's order (a region never called has
/// zero calls); `caller_of` names the function that holds a return address.
fn function_regions(specs: &[RegionSpec], r: &Results, caller_of: &dyn Fn(u32) -> Option<String>) -> Vec<RegionReport> {
    specs
        .iter()
        .enumerate()
        .map(|(id, spec)| {
            let s = r.functions.get(&(id as u32)).cloned().unwrap_or_default();
            RegionReport::new(spec, &s, caller_of)
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The stack probe's bytes below a region's entry SP: the plugin's figure when it knew the entry
/// SP of every completed activation (a partial maximum is no maximum).
pub fn probe_bytes(s: &mcubench_wire::RegionStats) -> Option<u32> {
    s.stack_bytes.filter(|_| s.stack_unknown == 0)
}

/// The static bound with the cell's annotation file (`kat.yaml` → `kat.speed.stack.yaml` or
/// `kat.stack.yaml`) when it has one, and the annotation entries this ELF has no function for.
/// Never fails the run: an analysis problem is reported as an unbounded result.
fn static_stack(
    image: &ElfImage,
    board: &Board,
    annotations: Option<&Path>,
) -> (StaticStack, Vec<Ignored>, Option<mcubench_stack::StackReport>) {
    use mcubench_stack::Bound;
    match crate::analyze::stack::analyze(image, board, annotations) {
        Err(e) => (
            StaticStack { kind: "unbounded".into(), reset: None, msp: None, note: e, top: None, excluding_panic: None },
            Vec::new(),
            None,
        ),
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
                top: report.top.clone(),
                excluding_panic: report.excluding_panic.as_ref().map(|x| crate::report::StaticExcludingPanic {
                    reset: x.reset.bytes(),
                    msp: x.msp.bytes(),
                    top: x.top.clone(),
                }),
            };
            (bound, ignored, Some(report))
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
    let flash = board.layout.flash;
    if let Some(vt) = image.vector_table()
        && !flash.contains(vt.address)
    {
        return Err(setup_error(format!(
            "{}: the vector table is at 0x{:08x}, outside {}'s flash 0x{:08x}..0x{:08x}; was it linked for another board?",
            elf.display(),
            vt.address,
            board.name,
            flash.origin,
            flash.end()
        )));
    }
    Ok(image)
}
