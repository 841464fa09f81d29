//! End to end: board timing profiles under QEMU. The C CRC-32 KATs with a 1 KiB lookup table in
//! flash (`kat-crc32-table`: instruction fetches and table loads from flash) run on mps2-an386
//! at zero wait states, with the STM32F407 profile (5 WS behind the ART accelerator) and with
//! the same flash without an accelerator, and the Cortex-M33 build with the STM32H563 profile on
//! mps2-an505: estimates order as the memory systems do, times are the cycles at the profile's
//! clock, every report shows the effective parameters, and runs are deterministic and the same
//! on QEMU 7.2 and QEMU 10 (memory callbacks and TB cuts differ between them).

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use mcubench::report::CellReport;

fn run_report(elf: &str, board: &str, extra: &str) -> mcubench::report::RunReport {
    let path = common::c_firmware(elf);
    let yaml = format!("name: t\nfirmware: {{ elf: {} }}\nboards: [{board}]\n{extra}", path.display());
    let report = common::run(&common::scenario(&yaml));
    for cell in &report.cells {
        assert_eq!(cell.verdict.outcome, mcubench::judge::verdict::Outcome::Pass, "{extra}: {:?}", cell.verdict);
    }
    report
}

fn run(elf: &str, board: &str, extra: &str) -> CellReport {
    common::only_cell(run_report(elf, board, extra))
}

fn kat_cycles(c: &CellReport) -> u64 {
    c.kats.iter().map(|k| k.cycles.expect("cycles")).sum()
}

#[test]
fn flash_wait_states_and_the_art_accelerator_order_the_estimates() {
    let zero = run("kat-crc32-table", "mps2-an386", "");
    let art = run("kat-crc32-table", "mps2-an386", "timing: stm32f407\n");
    let bare = run(
        "kat-crc32-table",
        "mps2-an386",
        "model: { clock: 168 MHz, flash: { wait-states: 5, line: 16, prefetch: false }, icache: off, dcache: off }\n",
    );
    let (z, a, b) = (kat_cycles(&zero), kat_cycles(&art), kat_cycles(&bare));
    eprintln!("kat-crc32-table KAT cycles: 0 WS {z}, STM32F407 with ART {a}, 5 WS without accelerator {b}");
    // Same instructions in all three.
    let insns = |c: &CellReport| c.kats.iter().map(|k| k.instructions).sum::<u64>();
    assert_eq!((insns(&zero), insns(&art)), (insns(&bare), insns(&bare)));
    // The ART hides much of the 5 wait states (warm loops hit its caches; the 1 KiB table does
    // not fit its 8-line data cache, so table loads still wait); without it, every line read
    // and every table load waits.
    assert!(z < a && a < b, "0 WS {z} < ART {a} < bare {b}");
    assert!((a - z) * 2 < b - z, "the accelerator should remove most of the stall: {z} {a} {b}");
    assert!(b as f64 > 1.5 * z as f64, "5 WS without an accelerator is far slower: {z} {b}");

    // Time at the clock, the clock and the parameters in the report.
    assert_eq!(art.clock_hz, Some(168_000_000));
    let k = &art.kats[0];
    let want = k.cycles.unwrap() as f64 / 168.0;
    assert!((k.time_us.unwrap() - want).abs() < 1e-9, "{:?} vs {want}", k.time_us);
    assert_eq!(art.cycle_params["timing"], "stm32f407");
    let model = art.cycle_model.as_deref().unwrap();
    assert!(model.ends_with("; memory system: flash 0x00000000..0x00400000 5 WS per 16 B line, prefetch, icache 1024 B 64-way, dcache 128 B 8-way"), "{model}");
    assert_eq!(art.cycle_params["icache"], "1024 B, 64-way, 16 B lines");
    assert_eq!(zero.cycle_params["flash"], "0 WS (no memory system)");
    assert!(zero.clock_hz.is_none() && zero.kats[0].time_us.is_none());

    // Deterministic: the same ELF and scenario give the same estimate.
    assert_eq!(kat_cycles(&run("kat-crc32-table", "mps2-an386", "timing: stm32f407\n")), a);
}

#[test]
fn the_stm32h563_profile_on_the_m33_board_reports_time_at_250_mhz() {
    let report = run_report("kat-crc32-mps2-an505", "mps2-an505", "timing: stm32h563\n");
    let cell = report.cells[0].clone();
    assert_eq!(cell.cycle_params["core"], "cortex-m33");
    assert_eq!(cell.cycle_params["clock"], "250 MHz");
    let total = cell.cycles_total.expect("whole-run cycles");
    let t = cell.time_total_us.expect("whole-run time");
    assert!((t - total as f64 / 250.0).abs() < 1e-6);
    let table = report.to_table();
    assert!(table.contains("mps2-an505/prebuilt: 250 MHz, whole run"), "{table}");
    assert!(table.contains("parameters: branch-refill=1, clock=250 MHz, core=cortex-m33,"), "{table}");
    assert!(table.contains("timing=stm32h563"), "{table}");
    let md = mcubench::report::markdown::to_markdown(&report, None);
    assert!(md.contains("at 250 MHz") && md.contains("timing=stm32h563"), "{md}");
    let json = report.to_json();
    assert!(json.contains("\"clock_hz\": 250000000") && json.contains("\"time_us\""), "{json}");
}

#[test]
fn qemu_7_and_10_give_the_same_estimates_with_a_memory_system() {
    let new = std::env::var_os("MCUBENCH_TEST_QEMU10")
        .map_or_else(|| std::path::PathBuf::from("/opt/qemu-10/usr/bin/qemu-system-arm"), std::path::PathBuf::from);
    assert!(new.is_file(), "{}: this test needs QEMU 10 beside 7.2 (bash ci/setup.sh)", new.display());
    let path = common::c_firmware("kat-crc32-table");
    let yaml = format!("name: t\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\ntiming: stm32f407\n", path.display());
    let scenario = common::scenario(&yaml);
    let on = |qemu: std::path::PathBuf| {
        let options = mcubench::RunOptions { jobs: 1, qemu, ..mcubench::RunOptions::default() };
        let cell = common::only_cell(mcubench::run_scenario(&scenario, &options));
        (cell.kats.iter().map(|k| k.cycles).collect::<Vec<_>>(), cell.cycles_total, cell.qemu)
    };
    let (old, new) = (on("qemu-system-arm".into()), on(new));
    assert_ne!(old.2, new.2, "two QEMU versions");
    assert_eq!((old.0, old.1), (new.0, new.1));
}

/// `--timing` gives a prebuilt ELF the profile a scenario's `timing:` would (`run --elf` and
/// `profile --elf`); an unknown profile is bad input (exit 2) listing the known ones.
#[test]
fn timing_flag_for_a_prebuilt_elf() {
    let elf = common::c_firmware("kat-crc32-table");
    let scenario = kat_cycles(&run("kat-crc32-table", "mps2-an386", "timing: stm32f407\n"));
    let out = common::mcubench()
        .args(["run", "--board", "mps2-an386", "--timing", "stm32f407", "--format", "json", "--elf"])
        .arg(&elf)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: mcubench::report::RunReport = serde_json::from_slice(&out.stdout).unwrap();
    let cell = &report.cells[0];
    assert_eq!(cell.cycle_params["timing"], "stm32f407");
    assert_eq!(kat_cycles(cell), scenario, "the flag prices the ELF as the scenario key does");

    let dir = tempfile::tempdir().unwrap();
    let out = common::mcubench()
        .args(["profile", "--board", "mps2-an386", "--timing", "stm32f407", "--out"])
        .arg(dir.path())
        .arg("--elf")
        .arg(&elf)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("memory system: flash"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let out = common::mcubench()
        .args(["run", "--board", "mps2-an386", "--timing", "stm32f4", "--elf"])
        .arg(&elf)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown board timing profile `stm32f4`") && err.contains("stm32f407, "), "{err}");
}

/// The calibrated profile of pqm4's board is exactly the configuration `mcubench calibrate`
/// fitted (validation.md, "Calibration on the fit rows"): the `stm32l476` ART at 20 MHz with the
/// fitted refill (the core model's own, 1) and wait state. The report shows the refill, and a C
/// KAT costs more than on the same memory system at ST's 0 WS.
#[test]
fn the_calibrated_stm32l4r5_profile_is_the_fitted_configuration() {
    let profile = run("kat-crc32-table", "mps2-an386", "timing: stm32l4r5\n");
    let fitted = run(
        "kat-crc32-table",
        "mps2-an386",
        "timing: stm32l476\nmodel: { clock: 20 MHz, branch-refill: 1, flash: { wait-states: 1, line: 8, prefetch: true } }\n",
    );
    let unfitted = run(
        "kat-crc32-table",
        "mps2-an386",
        "timing: stm32l476\nmodel: { clock: 20 MHz, flash: { wait-states: 0, line: 8, prefetch: true } }\n",
    );
    assert_eq!(kat_cycles(&profile), kat_cycles(&fitted), "the profile is the fitted configuration");
    assert!(kat_cycles(&profile) > kat_cycles(&unfitted), "{} vs {}", kat_cycles(&profile), kat_cycles(&unfitted));
    assert_eq!(profile.cycle_params["timing"], "stm32l4r5");
    assert_eq!(profile.cycle_params["branch-refill"], "1");
    assert_eq!(profile.cycle_params["clock"], "20 MHz");
    assert_eq!(profile.cycle_params["flash"], "0x00000000..0x00400000, 1 WS, 8 B lines");
}
