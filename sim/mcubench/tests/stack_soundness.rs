//! Soundness of the static stack bound: for every board × profile of scenarios/kat.yaml, the
//! static bound of the reset path (with scenarios/kat.stack.yaml) is at least the stack
//! high-water mark measured in a real QEMU run, and so is the bound excluding panic/abort paths
//! (sound ≥ excluding ≥ measured), whose top contributor is named. Prints the ratios per cell.
//! (The C stack-test firmware has the same check in sim/stack/tests/stack_firmware.rs.)

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

use std::path::{Path, PathBuf};

use mcubench::config::scenario::Scenario;
use mcubench::pipeline::{RunOptions, run_scenario};
use mcubench_elf::ElfImage;
use mcubench_stack::annotations::path_for_scenario;

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
        let x = r.excluding_panic.as_ref().expect("bound excluding panic/abort paths");
        let excl = x.reset.bytes();
        let top = x.top.as_ref().map_or("-".to_string(), |t| format!("{} {} B", t.function, t.bytes));
        eprintln!(
            "{:<12} {:<9} static {bound:>6} B  excl. panic {:>6} B  measured {measured:>5} B  ratio {ratio:.2} / {:.2}  \
             top {top}  (MSP with handlers {:?})",
            cell.board,
            cell.profile,
            excl.unwrap_or(0),
            f64::from(excl.unwrap_or(0)) / f64::from(measured.max(1)),
            r.msp.bytes()
        );
        checked += 1;
        if bound < measured {
            failures.push(format!("{}/{}: static {bound} B < measured {measured} B", cell.board, cell.profile));
        }
        match excl {
            Some(e) if e <= bound && e >= measured => {}
            other => failures.push(format!(
                "{}/{}: excluding panic {other:?} B not between measured {measured} B and sound {bound} B",
                cell.board, cell.profile
            )),
        }
        // The ARMv6-M switch in main (`mov pc`/`add pc` through a table of cases) is followed
        // case by case, not read as an indirect jump out of the function.
        if r.function("kat::__cortex_m_rt_main")
            .is_some_and(|f| f.calls.iter().any(|c| matches!(c.kind, mcubench_stack::CallKind::IndirectTail)))
        {
            failures.push(format!("{}/{}: an indirect tail jump in kat::__cortex_m_rt_main", cell.board, cell.profile));
        }
        if x.top.is_none() || r.top.is_none() {
            failures.push(format!("{}/{}: no top contributor", cell.board, cell.profile));
        }
        // The report carries the same figures.
        let st = cell.stack_static.as_ref().expect("static stack in the report");
        if st.excluding_panic.as_ref().and_then(|x| x.reset) != excl {
            failures.push(format!("{}/{}: report's excluding-panic bound differs", cell.board, cell.profile));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(checked, 15, "every board × profile checked");
}
