//! `mcubench profile`: per-function estimated cycles and instructions of a whole run, folded
//! stacks and a flame graph (via `inferno`).
//!
//! The QEMU plugin keeps a shadow call stack (rules: `sim/qemu-plugin/src/profile.rs`) over the
//! function ranges of the ELF's symbol table, which the host passes in a file, and reports the self
//! cost of every call-tree node. Self cycles of all functions sum to the whole run's cycles.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use mcubench_elf::ElfImage;
use mcubench_wire::{PluginArgs, Results};

use crate::Error;
use crate::config::board::Board;
use crate::config::scenario::{CycleCounter, Measure};
use crate::exec::plugin;
use crate::exec::qemu::ProcessEnd;
use crate::exec::scratch::ScratchDir;
use crate::exec::{self, Launch};

/// One function's share of a run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FunctionCost {
    /// Demangled name; `[unknown]` for code outside every function symbol.
    pub name: String,
    pub self_cycles: u64,
    pub self_insns: u64,
    /// Including callees (a recursive function counts once per stack).
    pub inclusive_cycles: u64,
    pub inclusive_insns: u64,
}

/// A whole-run profile.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Profile {
    pub board: String,
    /// The cycle model (`mcubench-timing`'s description; approximate for the Cortex-M7).
    pub model: String,
    /// Whole-run estimated cycles (= the sum of every function's self cycles).
    pub cycles: u64,
    /// Whole-run instructions (TB-granular, as the plugin's `insns`).
    pub insns: u64,
    /// The core clock of the board timing profile or `model.clock`, Hz; with it the table gives
    /// times at that clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_hz: Option<u64>,
    /// By self cycles, largest first (ties by name).
    pub functions: Vec<FunctionCost>,
    /// Folded stacks (`outer;inner <self cycles>` per line), the input of flame graph tools.
    pub folded: String,
    /// Set when the run hit its wall-clock timeout: the profile is then of the part that ran
    /// (QEMU was asked to quit at the timeout, and the plugin wrote what it had).
    /// (In JSON: `timed_out_after_s`, seconds.)
    #[serde(rename = "timed_out_after_s", serialize_with = "as_seconds", skip_serializing_if = "Option::is_none")]
    pub timed_out_after: Option<Duration>,
}

fn as_seconds<S: serde::Serializer>(t: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(t.map_or(0.0, |t| t.as_secs_f64()))
}

/// Runs `elf` on `board` under QEMU with the plugin's profiler and returns the profile. Any exit
/// code gives a profile (a failing firmware can be profiled too). At the `timeout`, QEMU is asked
/// to quit so that the plugin writes what it has: the profile of the part that ran comes back
/// with [`Profile::timed_out_after`] set (it is an error only if QEMU did not quit in time to
/// write it). `measure`: the cycle model of the cell, as `run` uses it. `contained`: see
/// [`crate::exec::contain`]; a firmware that tried to reach the host gets no profile, while
/// QEMU's own system calls are never held against it. `loop_end`: the run ends at the first
/// branch to itself outside every exception handler (`verdict.exit: loop`). `counter`: what the
/// firmware's loads of the DWT cycle counter read (`cycle-counter:`).
pub fn profile(
    board: &Board,
    elf: &Path,
    timeout: Duration,
    contained: bool,
    measure: &Measure,
    loop_end: bool,
    counter: CycleCounter,
) -> Result<Profile, Error> {
    use Error::{Input, Run, Setup};
    let so = plugin::locate()
        .map_err(Setup)?
        .ok_or_else(|| Setup(format!("profiling needs the QEMU plugin; unset {}", plugin::ENV)))?;
    let image = ElfImage::read(elf).map_err(|e| Input(e.to_string()))?;
    let markers = plugin::find_markers(&image).map_err(|e| Input(format!("{}: {e}", elf.display())))?;
    let dir = ScratchDir::new().map_err(|e| Setup(format!("cannot create a scratch directory: {e}")))?;
    let functions = plugin::function_table(&image);
    let functions_file = dir.path().join("functions.txt");
    let list = plugin::functions_file(&functions, &[]);
    std::fs::write(&functions_file, list)
        .map_err(|e| Setup(format!("cannot write {}: {e}", functions_file.display())))?;
    let out = dir.path().join("results.txt");
    // The cell's cycle model (board timing profile, `model:`, wait states), as `run` prices it.
    let model = measure.model_for(board);
    let clock_hz = model.clock_hz;
    // The idle loops where the run ends, and the live cycle counter's loads (see `exec::counter`).
    let (idle, counter_loads) =
        plugin::scanned(&image, model.core, loop_end, counter == CycleCounter::Estimated).map_err(Setup)?;
    let counter_file = dir.path().join("cycle-counter.bin");
    let live = (!counter_loads.is_empty()).then_some(exec::LiveCounter { loads: &counter_loads, file: &counter_file });
    let args = PluginArgs {
        markers,
        core: Some(model.core),
        functions: Some(functions_file),
        profile: true,
        wait_states: measure.wait_states.clone(),
        params: model.param_args(),
        memory: model.memory.clone(),
        loop_end,
        counter: live.map(|l| l.file.to_path_buf()),
        idle,
        ..PluginArgs::new(&out)
    };
    let option = args.to_option(&so);
    let launch = Launch::new(board, elf, timeout)
        .with_plugin(Some(&option))
        .contained(contained)
        .quit_on_timeout(true)
        .with_counter(live);
    let execution = exec::execute(&launch).map_err(|e| Setup(e.to_string()))?;
    if let Some(Err(e)) = &execution.counter {
        return Err(Setup(format!("cycle-counter: estimated: {e}")));
    }
    if let Some(e) = &execution.start_error {
        return Err(Setup(format!("QEMU never started the guest ({e}); no profile")));
    }
    if !execution.events.is_empty() {
        let events: Vec<String> = execution.events.iter().map(|e| e.to_string()).collect();
        return Err(Run(format!("{}; no profile", events.join("; "))));
    }
    let run = &execution.run;
    if let Some(line) = run.stderr.lines().find(|l| l.starts_with("mcubench-qemu-plugin: error:")) {
        return Err(Setup(line.to_string()));
    }
    let timed_out_after = match run.end {
        ProcessEnd::Exited(_) | ProcessEnd::Reset => None,
        ProcessEnd::TimedOut => Some(timeout),
        _ => return Err(Run(format!("QEMU did not exit normally ({:?}); no profile", run.end))),
    };
    let results = plugin::read_results(&out).map_err(|e| match timed_out_after {
        Some(t) => Run(format!(
            "the run timed out after {} and QEMU did not quit in time for the plugin to write its results              ({e}); no profile",
            seconds(t)
        )),
        None => Setup(e),
    })?;
    let names: Vec<&str> = functions.iter().map(|f| f.name.as_str()).collect();
    let mut profile = from_results(board, &results, &names).map_err(Setup)?;
    profile.timed_out_after = timed_out_after;
    profile.clock_hz = clock_hz;
    Ok(profile)
}

/// A duration as the messages give it: `2 s`, `1.5 s`.
fn seconds(t: Duration) -> String {
    format!("{} s", t.as_secs_f64())
}

/// Builds the profile from a results file and the names of the functions file's lines.
pub fn from_results(board: &Board, r: &Results, names: &[&str]) -> Result<Profile, String> {
    let estimate = r.cycles.as_ref().ok_or("the plugin ran without a cycle model")?;
    let model = estimate.model.clone();
    let cycles = match &estimate.total {
        Ok(c) => *c,
        Err(reason) => return Err(format!("cycles unavailable: {reason}")),
    };
    if r.stacks.is_empty() {
        return Err("the plugin reported no stacks (was `functions=` passed?)".into());
    }
    let name = |f: &Option<u32>| -> String {
        match f.and_then(|i| names.get(i as usize)) {
            Some(n) => n.replace(';', ":"),
            None => "[unknown]".into(),
        }
    };
    let mut per: BTreeMap<String, FunctionCost> = BTreeMap::new();
    let mut folded_lines: BTreeMap<String, u64> = BTreeMap::new();
    for s in &r.stacks {
        let frames: Vec<String> = s.frames.iter().map(name).collect();
        let Some(leaf) = frames.last() else { continue };
        let entry = |per: &mut BTreeMap<String, FunctionCost>, n: &str| {
            per.entry(n.to_string())
                .or_insert_with(|| FunctionCost {
                    name: n.to_string(),
                    self_cycles: 0,
                    self_insns: 0,
                    inclusive_cycles: 0,
                    inclusive_insns: 0,
                })
                .clone()
        };
        let _ = entry(&mut per, leaf);
        let f = per.get_mut(leaf).expect("inserted");
        f.self_cycles += s.cycles;
        f.self_insns += s.insns;
        let mut seen: Vec<&String> = Vec::new();
        for fr in &frames {
            if seen.contains(&fr) {
                continue;
            }
            seen.push(fr);
            let _ = entry(&mut per, fr);
            let f = per.get_mut(fr.as_str()).expect("inserted");
            f.inclusive_cycles += s.cycles;
            f.inclusive_insns += s.insns;
        }
        if s.cycles > 0 {
            *folded_lines.entry(frames.join(";")).or_default() += s.cycles;
        }
    }
    let mut functions: Vec<FunctionCost> = per.into_values().collect();
    functions.sort_by(|a, b| b.self_cycles.cmp(&a.self_cycles).then_with(|| a.name.cmp(&b.name)));
    let mut folded = String::new();
    for (stack, c) in &folded_lines {
        let _ = writeln!(folded, "{stack} {c}");
    }
    Ok(Profile {
        board: board.name.into(),
        model,
        cycles,
        insns: r.insns,
        clock_hz: None,
        functions,
        folded,
        timed_out_after: None,
    })
}

impl Profile {
    /// The flame graph of [`Profile::folded`] as an SVG document (widths: estimated cycles).
    pub fn flame_graph_svg(&self, title: &str) -> Result<Vec<u8>, String> {
        let mut options = inferno::flamegraph::Options::default();
        options.title = title.to_string();
        options.count_name = "est. cycles".to_string();
        options.subtitle = Some(self.model.clone());
        let mut svg = Vec::new();
        inferno::flamegraph::from_lines(&mut options, self.folded.lines(), &mut svg).map_err(|e| e.to_string())?;
        Ok(svg)
    }

    /// What a partial profile says first: `partial: the run timed out after N s`.
    pub fn partial_note(&self) -> Option<String> {
        self.timed_out_after.map(|t| format!("partial: the run timed out after {}", seconds(t)))
    }

    /// A table of the `top` functions by self cycles, after the [`Profile::partial_note`] if any;
    /// with a clock, the whole run's and each function's inclusive time at it.
    pub fn table(&self, top: usize) -> String {
        let time = |cycles: u64| crate::report::time_us(Some(cycles), self.clock_hz).map(crate::report::format_time);
        let mut header: Vec<String> =
            ["function", "self cycles", "self %", "self insns", "incl. cycles", "incl. insns"]
                .map(String::from)
                .to_vec();
        if self.clock_hz.is_some() {
            header.push("incl. time".into());
        }
        let mut rows = vec![header];
        for f in self.functions.iter().take(top) {
            let mut row = vec![
                f.name.clone(),
                f.self_cycles.to_string(),
                format!("{:.2}", 100.0 * f.self_cycles as f64 / self.cycles.max(1) as f64),
                f.self_insns.to_string(),
                f.inclusive_cycles.to_string(),
                f.inclusive_insns.to_string(),
            ];
            row.extend(time(f.inclusive_cycles));
            rows.push(row);
        }
        let note = self.partial_note().map(|n| format!("{n}\n")).unwrap_or_default();
        let at_clock = match (time(self.cycles), self.clock_hz) {
            (Some(t), Some(hz)) => format!(" = {t} at {}", crate::config::timing::clock_text(hz)),
            _ => String::new(),
        };
        format!(
            "{note}{}: {} est. cycles{at_clock} (model: {}), {} instructions\n{}",
            self.board,
            self.cycles,
            self.model,
            self.insns,
            crate::report::render(&rows, 1)
        )
    }
}
