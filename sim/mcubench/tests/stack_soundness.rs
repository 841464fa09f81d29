//! Soundness of the static stack bound: for every board × profile of scenarios/kat.yaml, the
//! static bound of the reset path (with scenarios/kat.stack.yaml) is at least the stack
//! high-water mark measured in a real QEMU run. Prints static/measured per cell.
//! (The C stack-test firmware has the same check in sim/stack/tests/stack_firmware.rs.)

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

use std::path::{Path, PathBuf};

use mcubench::pipeline::{RunOptions, run_scenario};
use mcubench::config::scenario::Scenario;
use mcubench_stack::annotations::path_for_scenario;
use mcubench_elf::ElfImage;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn static_bound_is_at_least_the_measured_high_water_mark() {
    let scenario_path = repo().join("scenarios/kat.yaml");
    let scenario = Scenario::load(&scenario_path).expect("kat scenario");
    let annotations = path_for_scenario(&scenario_path);
    assert!(annotations.is_file(), "{} exists", annotations.display());
    let report = run_scenario(&scenario, &RunOptions::default());
    let source = mcubench::build::ElfSource::new(&scenario.firmware).expect("cargo metadata of firmware/kat");
    let mut failures = Vec::new();
    let mut checked = 0;
    for cell in &report.cells {
        let board = scenario.boards.iter().find(|b| b.name == cell.board).expect("board of cell");
        let measured =
            cell.stack_high_water.unwrap_or_else(|| panic!("{}/{}: no stack measurement", cell.board, cell.profile));
        let profile = scenario.profiles.iter().find(|p| p.name == cell.profile).expect("profile of cell");
        // The ELF the run used (already built: this only asks cargo where it is).
        let elf = source.elf(board, profile).expect("the cell's ELF");
        let image = ElfImage::read(&elf).unwrap_or_else(|e| panic!("{}: {e}", elf.display()));
        let (r, _ignored) =
            mcubench::analyze::stack::analyze(&image, board, Some(&annotations)).unwrap_or_else(|e| panic!("{e}"));
        let reset = r.roots.iter().find(|x| x.role == "reset").expect("reset root");
        let Some(bound) = reset.bound.bytes() else {
            failures.push(format!("{}/{}: reset path unbounded: {:?}", cell.board, cell.profile, reset.bound));
            continue;
        };
        let ratio = f64::from(bound) / f64::from(measured.max(1));
        eprintln!(
            "{:<12} {:<9} static {bound:>6} B  measured {measured:>5} B  ratio {ratio:.2}  (MSP with handlers {:?})",
            cell.board,
            cell.profile,
            r.msp.bytes()
        );
        checked += 1;
        if bound < measured {
            failures.push(format!("{}/{}: static {bound} B < measured {measured} B", cell.board, cell.profile));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(checked, 15, "every board × profile checked");
}
