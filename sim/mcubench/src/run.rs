//! Runs a scenario: build every board × profile, run each ELF under QEMU, analyze it, judge it and
//! gate it. Builds go one at a time (cargo already uses every core); QEMU runs go in parallel,
//! and the report keeps the scenario's order whatever order they finish in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcubench_elf::{ElfImage, MemoryReport};

use crate::board::Board;
use crate::build::{self, CargoFirmware};
use crate::gate::{self, Measured};
use crate::protocol::Transcript;
use crate::qemu;
use crate::report::{CellReport, KatReport, RunReport, SCHEMA};
use crate::scenario::{Firmware, Profile, Scenario};
use crate::verdict::{self, Outcome, Verdict};

/// How many symbols the memory report lists.
pub const TOP_SYMBOLS: usize = 10;

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// QEMU processes at once.
    pub jobs: usize,
    /// Progress lines on stderr.
    pub progress: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { jobs: std::thread::available_parallelism().map_or(1, |n| n.get()), progress: false }
    }
}

/// One board × profile of the scenario, with the ELF to run or why there is none.
struct Cell<'a> {
    board: &'static Board,
    profile: &'a Profile,
    elf: Result<PathBuf, Verdict>,
}

fn setup_error(message: impl Into<String>) -> Verdict {
    Verdict { outcome: Outcome::SetupError, message: message.into() }
}

pub fn run_scenario(scenario: &Scenario, options: &RunOptions) -> RunReport {
    let say = |msg: String| {
        if options.progress {
            eprintln!("mcubench: {msg}");
        }
    };
    let mut cells = Vec::new();
    match &scenario.firmware {
        Firmware::Elf { path } => {
            for board in &scenario.boards {
                for profile in &scenario.profiles {
                    cells.push(Cell { board, profile, elf: Ok(path.clone()) });
                }
            }
        }
        Firmware::Cargo { package_dir, bin, features } => {
            let firmware = CargoFirmware { package_dir, bin, features };
            let target_root = build::target_directory(package_dir).map_err(|e| setup_error(e.to_string()));
            // Boards with the same target and memory layout share one ELF per profile.
            let mut built: BTreeMap<(&str, &str, &str), Result<PathBuf, Verdict>> = BTreeMap::new();
            for board in &scenario.boards {
                for profile in &scenario.profiles {
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
                    cells.push(Cell { board, profile, elf });
                }
            }
        }
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
                    let report = run_cell(cell, scenario);
                    *results[i].lock().expect("no panics while holding") = Some(report);
                }
            });
        }
    });

    RunReport {
        schema: SCHEMA,
        tool_version: env!("CARGO_PKG_VERSION"),
        scenario: scenario.name.clone(),
        cells: results.into_iter().map(|m| m.into_inner().expect("not poisoned").expect("every cell ran")).collect(),
    }
}

fn run_cell(cell: &Cell<'_>, scenario: &Scenario) -> CellReport {
    let board = cell.board;
    let mut report = CellReport {
        board: board.name.into(),
        core: board.core,
        profile: cell.profile.name.clone(),
        elf: None,
        verdict: setup_error(""),
        instructions_per_tick: board.instructions_per_tick(),
        kats: Vec::new(),
        stack_high_water: None,
        memory: None,
        budgets: Vec::new(),
    };
    let gate = |report: &mut CellReport| {
        report.budgets = gate::check(
            &cell.profile.budgets,
            Measured {
                flash: report.flash_bytes(),
                ram: report.ram_bytes(),
                stack: report.stack_high_water.map(u64::from),
            },
        );
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

    let run = match qemu::run(board, elf, scenario.timeout) {
        Ok(run) => run,
        Err(e) => {
            report.verdict = setup_error(e.to_string());
            gate(&mut report);
            return report;
        }
    };
    let transcript = Transcript::parse(&run.stdout);
    let symbolize = |pc: u32| match image.symbolize(u64::from(pc)) {
        Some((name, off)) => format!("{name}+0x{off:x}"),
        None => "no symbol".to_string(),
    };
    report.verdict = verdict::judge(&run, transcript.as_ref(), scenario.timeout.as_secs_f64(), &symbolize);
    if let Ok(t) = &transcript {
        report.kats = t
            .kats()
            .map(|k| KatReport {
                id: k.id.clone(),
                alg: k.alg.clone(),
                op: k.op.clone(),
                result: k.result.clone(),
                instructions: board.ticks_to_instructions(k.ticks),
                ticks: k.ticks,
                stack: k.stack,
            })
            .collect();
        report.stack_high_water = t.end().map(|e| e.stack);
    }
    gate(&mut report);
    report
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
