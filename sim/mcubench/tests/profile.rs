//! `mcubench::profile` on the Rust KAT firmware: the flame graph shows the Keccak and AES code,
//! and self cycles of all functions sum to the whole run's cycles.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::time::Duration;

use mcubench::Scenario;

fn kat_elf(board: &str, profile: &str) -> (std::path::PathBuf, &'static mcubench::Board) {
    let mut s = Scenario::load(&common::repo().join("scenarios/kat.yaml")).unwrap();
    s.boards.retain(|b| b.name == board);
    s.profiles.retain(|p| p.name == profile);
    let mcubench::config::scenario::Firmware::Cargo { package_dir, bin, features } = &s.firmware else {
        unreachable!()
    };
    let root = mcubench::build::target_directory(package_dir).unwrap();
    let firmware = mcubench::build::CargoFirmware { package_dir, bin, features };
    (mcubench::build::build(&firmware, &root, s.boards[0], &s.profiles[0]).unwrap(), s.boards[0])
}

/// The profile of a contained run of `elf` with the cell's cycle model `measure`, within 30 s.
fn contained_profile(
    board: &mcubench::Board,
    elf: &std::path::Path,
    measure: &mcubench::config::scenario::Measure,
) -> mcubench::profile::Profile {
    mcubench::profile::profile(board, elf, Duration::from_secs(30), true, measure, false, Default::default()).unwrap()
}

#[test]
fn kat_firmware_profile_has_keccak_and_aes_and_adds_up() {
    let (elf, board) = kat_elf("mps2-an386", "speed");
    let p = contained_profile(board, &elf, &Default::default());
    eprintln!("{}", p.table(15));
    let self_sum: u64 = p.functions.iter().map(|f| f.self_cycles).sum();
    assert_eq!(self_sum, p.cycles, "self cycles sum to the whole run");
    let insns_sum: u64 = p.functions.iter().map(|f| f.self_insns).sum();
    assert_eq!(insns_sum, p.insns, "self instructions sum to the whole run");
    let folded_sum: u64 = p.folded.lines().map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap()).sum();
    assert_eq!(folded_sum, p.cycles);
    // Inclusive ≥ self, and the outermost frame (reset handler/main) holds nearly everything.
    assert!(p.functions.iter().all(|f| f.inclusive_cycles >= f.self_cycles));
    let top = p.functions.iter().map(|f| f.inclusive_cycles).max().unwrap();
    assert!(top * 10 >= p.cycles * 9, "an outer frame holds ≥ 90 % ({top} of {})", p.cycles);
    let svg = String::from_utf8(p.flame_graph_svg("kat mps2-an386 speed").unwrap()).unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains("<svg"));
    let has = |needle: &str| p.functions.iter().any(|f| f.name.to_lowercase().contains(needle) && f.self_cycles > 0);
    assert!(has("keccak"), "a Keccak function has cycles: {}", p.table(30));
    assert!(has("aes"), "an AES function has cycles: {}", p.table(30));
    assert!(svg.to_lowercase().contains("keccak") && svg.to_lowercase().contains("aes"));
}

/// The profile prices the run as `mcubench run` prices the cell: with the scenario's board timing
/// profile (here the STM32F407's 5 wait states, prefetch and ART caches), not the bare core.
#[test]
fn the_profile_uses_the_cells_timing_profile() {
    let scenario = common::kat_speed_as_stm32f407();
    let report = mcubench::run_scenario(&scenario, &mcubench::RunOptions { jobs: 1, ..Default::default() });
    let cell = &report.cells[0];
    let (elf, board) = kat_elf("mps2-an386", "speed");
    let measure = scenario.measure("speed");
    let p = contained_profile(board, &elf, &measure);
    assert!(p.model.contains("memory system: flash"), "{}", p.model);
    assert_eq!(Some(&p.model), cell.cycle_model.as_ref());
    assert_eq!(Some(p.cycles), cell.cycles_total, "the profile's whole-run cycles are the run's");
    let bare = contained_profile(board, &elf, &Default::default());
    assert!(p.cycles > bare.cycles, "5 wait states cost cycles: {} vs {} at 0 WS", p.cycles, bare.cycles);
    // At the profile's clock, times as the run report gives them; the bare core has no clock.
    assert_eq!((p.clock_hz, bare.clock_hz), (Some(168_000_000), None));
    let table = p.table(5);
    let whole = mcubench::report::format_time(cell.time_total_us.unwrap());
    assert!(table.contains(&format!("est. cycles = {whole} at 168 MHz")) && table.contains("incl. time"), "{table}");
    assert!(!bare.table(5).contains("time"), "{}", bare.table(5));
}

/// `profile` with the live cycle counter (`cycle-counter: estimated`): the firmware's delay on
/// the counter (firmware/c/cyccnt built with -DWAIT_ON_COUNTER) ends and the profile is of the
/// whole run, where with the counter at 0 the run hangs in the delay and the profile is partial.
#[test]
fn a_profile_runs_past_a_delay_on_the_live_cycle_counter() {
    use mcubench::config::scenario::CycleCounter;
    let board = mcubench::Board::find("mps2-an386").unwrap();
    let elf = common::c_firmware("cyccnt-wait");
    let profile = |timeout: u64, counter| {
        mcubench::profile::profile(board, &elf, Duration::from_secs(timeout), true, &Default::default(), false, counter)
            .unwrap()
    };
    let live = profile(30, CycleCounter::Estimated);
    assert_eq!(live.timed_out_after, None);
    assert!(live.functions.iter().any(|f| f.name == "poll"), "the run went on past the delay");
    let zero = profile(1, CycleCounter::Zero);
    assert_eq!(zero.timed_out_after, Some(Duration::from_secs(1)));
    assert!(!zero.functions.iter().any(|f| f.name == "poll"));
}
