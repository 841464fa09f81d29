//! The fast path of `mcubench calibrate` is exact: a run traced once under QEMU and replayed
//! with other model parameters (`mcubench::replay`) gives, field for field, the plugin results
//! a live run with those parameters gives (whole-run cycles, every region's and function
//! region's cycle sum, minimum and maximum, each kept call's cycles, the model's name). Real C
//! firmware (the CRC-32 KATs: loops, flash table loads, SysTick) on the STM32F407 profile's
//! memory system (flash wait states, prefetch, ART caches) and on the Cortex-M33 profile, for
//! several parameter sets each, and on the Cortex-M7 (its branch history); the sets give
//! different cycles, so equality is not by accident.
//! And tracing itself changes no figure: a traced run gives an untraced run's cycles.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use mcubench::judge::verdict::Outcome;
use mcubench::replay::{ModelArgs, replay};
use mcubench::{Board, RunOptions, Scenario, run_scenario};
use mcubench_wire::Results;

/// `timing` "": no board timing profile (the core model alone).
fn scenario_for(elf: &str, board: &str, timing: &str, model: &str) -> Scenario {
    let timing = if timing.is_empty() { String::new() } else { format!("timing: {timing}\n") };
    common::scenario(&format!(
        "name: t\nfirmware: {{ elf: {} }}\nboards: [{board}]\n{timing}model: {model}\n\
         regions: [mb_puts, mb_dec, mcubench_region_enter]\n",
        common::c_firmware(elf).display()
    ))
}

/// The one cell of `elf` on `board` with `timing` and `model`, run traced into `dir`.
fn traced(
    elf: &str,
    board: &str,
    timing: &str,
    model: &str,
    dir: &std::path::Path,
) -> (Scenario, Results, Vec<u8>, bool) {
    let scenario = scenario_for(elf, board, timing, model);
    let options = RunOptions { jobs: 1, trace: Some(dir.to_path_buf()), ..RunOptions::default() };
    let cell = common::only_cell(run_scenario(&scenario, &options));
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{model}: {:?}", cell.verdict);
    let t = cell.traced.expect("a traced run");
    let data = std::fs::read(&t.trace).unwrap();
    (scenario, t.results, data, t.handlers)
}

/// Per-site cycles are not replayed (see `mcubench::replay`).
fn without_sites(mut r: Results) -> Results {
    for s in r.regions.values_mut().chain(r.functions.values_mut()) {
        s.sites.clear();
    }
    r
}

fn check(elf: &str, board: &str, timing: &str, sets: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let (_, base, data, handlers) = traced(elf, board, timing, sets[0], &dir.path().join("base"));
    let board = Board::find(board).unwrap();
    let mut totals = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let (scenario, live, _, _) = traced(elf, board.name, timing, set, &dir.path().join(i.to_string()));
        let args = ModelArgs::for_cell(&scenario, board, &scenario.profiles[0].name);
        let replayed = replay(&data, handlers, &args, &base).unwrap_or_else(|e| panic!("{set}: {e}"));
        assert_eq!(without_sites(replayed), without_sites(live.clone()), "{elf} on {} with {set}", board.name);
        assert!(!live.regions.is_empty() && !live.functions.is_empty(), "KAT regions and function regions ran");
        totals.push(live.cycles.unwrap().total.unwrap());
    }
    // Tracing changes nothing: an untraced run gives the traced run's cycles.
    let untraced = common::only_cell(common::run(&scenario_for(elf, board.name, timing, sets[1])));
    let (_, traced_live, _, _) = traced(elf, board.name, timing, sets[1], &dir.path().join("again"));
    assert_eq!(untraced.cycles_total, traced_live.cycles.unwrap().total.ok());
    let regions: Vec<_> = untraced.regions.iter().map(|r| r.cycles.map(|c| c.total)).collect();
    let functions: Vec<_> = traced_live.functions.values().map(|s| s.cycles.map(|c| c.0)).collect();
    assert_eq!(regions, functions);
    let mut distinct = totals.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), totals.len(), "every parameter set prices differently: {totals:?}");
}

#[test]
fn a_replayed_trace_prices_exactly_what_live_runs_price() {
    // Cortex-M4 with the STM32F407's flash, prefetch and ART caches (loads from the flash table).
    check(
        "kat-crc32-table",
        "mps2-an386",
        "stm32f407",
        &[
            "{ branch-refill: 1, flash: { wait-states: 0 } }",
            "{ branch-refill: 2, flash: { wait-states: 3 } }",
            "{ branch-refill: 3, divide: 12, flash: { wait-states: 5, prefetch: false }, icache: off }",
            "{ branch-refill: 0, flash: { wait-states: 7 }, dcache: off }",
        ],
    );
    // Cortex-M33 with the STM32H563's flash and instruction cache.
    check(
        "kat-crc32-mps2-an505",
        "mps2-an505",
        "stm32h563",
        &["{ branch-refill: 1 }", "{ branch-refill: 2, flash: { wait-states: 2 } }"],
    );
    // Cortex-M7 (the same M4F ELF on QEMU's Cortex-M7 board): the branch history the
    // misprediction penalty follows (per branch and global) is rebuilt by the replay from the
    // trace.
    check(
        "kat-crc32-table",
        "mps2-an500",
        "",
        &[
            "{ m7-mispredict: 8 }",
            "{ m7-mispredict: 0 }",
            "{ m7-mispredict: 6, branch-refill: 2 }",
            "{ m7-history: 0 }",
            "{ m7-history: 12, m7-mispredict: 7 }",
        ],
    );
}
