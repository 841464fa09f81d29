//! Wall time of `mcubench calibrate` on a small fixed set, priced both ways: live (every cell
//! under QEMU once per parameter set, as before run traces) and by trace replay (every cell under
//! QEMU once, every parameter set priced from its run trace).
//!
//! ```text
//! cargo run --release -p mcubench --example bench_calibrate
//! ```
//!
//! The set: the bundled KAT firmware (`firmware/kat`, SHA-3, SHAKE and AES known-answer tests,
//! built for mps2-an386 at opt-level 3) on the STM32F407 board timing profile. Its "measured"
//! rows are its KATs' cycles under QEMU with a known parameter set (branch-refill 2, flash wait
//! states 3), as `tests/calibrate.rs` makes them; calibrating `branch-refill` and
//! `flash.wait-states` from them searches the whole 4 × 9 grid plus the leave-one-out fits.
//! Prints both wall times, their ratio and the QEMU runs each made, and checks that both print
//! the same calibration. Not a test: timings depend on the machine.

use std::time::Instant;

use mcubench::calibrate::{Calibration, Pricing, calibrate};
use mcubench::{RunOptions, Scenario, run_scenario};

fn main() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap();
    let dir = std::env::temp_dir().join(format!("mcubench-bench-calibrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let firmware = repo.join("firmware/kat");
    let scenario = |model: &str| {
        format!(
            "name: bench-calibrate\nfirmware: {{ cargo: {} }}\nboards: [mps2-an386]\nprofiles: {{ speed: {{ opt-level: 3 }} }}\n\
             timing: stm32f407\n{model}timeout: 60 s\n",
            firmware.display()
        )
    };
    let measured = dir.join("measured.yaml");
    std::fs::write(&measured, scenario("model: { branch-refill: 2, flash: { wait-states: 3 } }\n")).unwrap();
    std::fs::write(dir.join("kat.yaml"), scenario("")).unwrap();
    eprintln!("building firmware/kat and measuring its KATs with branch-refill 2, flash wait-states 3 ...");
    let options = RunOptions { jobs: 2, ..RunOptions::default() };
    let report = run_scenario(&Scenario::load(&measured).unwrap(), &options);
    let cell = &report.cells[0];
    assert_eq!(cell.verdict.outcome.label(), "pass", "{:?}", cell.verdict);
    let mut rows = String::from("free: [branch-refill, flash.wait-states]\nrows:\n");
    for k in &cell.kats {
        rows.push_str(&format!(
            "  - {{ scenario: kat.yaml, board: mps2-an386, kat: {}, cycles: {} }}\n",
            k.id,
            k.cycles.expect("cycle estimates")
        ));
    }
    let rows_file = dir.join("rows.yaml");
    std::fs::write(&rows_file, rows).unwrap();
    let c = Calibration::load(&rows_file, Some("stm32f407"), None).unwrap();

    let mut printed = Vec::new();
    for pricing in [Pricing::Live, Pricing::Replay] {
        let started = Instant::now();
        let fitted = calibrate(&c, options.clone(), pricing).unwrap();
        let wall = started.elapsed().as_secs_f64();
        println!(
            "{:<13} {:6.1} s wall, {:3} QEMU runs, {} parameter sets, {} rows",
            match pricing {
                Pricing::Live => "live:",
                Pricing::Replay => "trace replay:",
            },
            wall,
            fitted.qemu_runs,
            fitted.evaluations,
            c.rows.len()
        );
        printed.push((wall, fitted.render()));
    }
    println!("speed-up: {:.1}x", printed[0].0 / printed[1].0);
    // The same calibration, all but the first line (which counts the QEMU runs).
    let body = |text: &str| text.split_once('\n').map(|(_, rest)| rest.to_string()).unwrap_or_default();
    assert_eq!(body(&printed[0].1), body(&printed[1].1), "the same calibration");
    let _ = std::fs::remove_dir_all(&dir);
}
