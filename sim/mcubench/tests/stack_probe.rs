//! The stack probe and the bound excluding panic/abort paths on a real newlib-nano firmware
//! (firmware/c/stack-probe: malloc of 6000 B written in full, recursion with a 200-byte frame,
//! soft double, printf, an assert that never fails), under real QEMU (the one MCUBENCH_QEMU
//! names: `.ci/run` runs this file on QEMU 7.2 and on QEMU 10).
//!
//! - The probe counts stores to the stack region only (from `__HeapLimit`, which the firmware's
//!   CMSIS-style linker script defines, to the initial SP) and reports bytes below the initial
//!   SP: it equals the painted high-water mark within [`PROBE_SLACK`]. Before, the region started
//!   at the end of .bss, the heap's stores counted as stack and the probe read about 4 MiB.
//! - Without a symbol that bounds the stack (the same program linked with a heap growing from
//!   `end`), the report says that no stack region was found instead of a number.
//! - The static bound: sound ≥ excluding panic/abort paths ≥ measured, the assert's
//!   `__assert_func` path is what the exclusion removes, and the top contributor is the
//!   recursion.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use mcubench::judge::verdict::Outcome;
use mcubench::report::CellReport;
use mcubench_elf::ElfImage;

/// How far the probe may sit above the painted mark: painting misses a store that writes the
/// paint pattern itself (0xcccccccc) at the deepest word, the probe never does; two words.
const PROBE_SLACK: u32 = 8;

fn probe_cell(elf: &str) -> CellReport {
    let yaml = format!(
        "name: stack-probe\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\nstack-probe: true\n",
        common::c_firmware(elf).display()
    );
    let cell = common::only_cell(common::run(&common::scenario(&yaml)));
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{elf}: {}", cell.verdict.message);
    cell
}

fn symbol(image: &ElfImage, name: &str) -> u32 {
    image.symbol(name).unwrap_or_else(|| panic!("no symbol {name}")).address as u32
}

#[test]
fn probe_counts_the_stack_region_not_the_heap_and_matches_the_painted_mark() {
    let cell = probe_cell("stack-probe");
    let image = ElfImage::read(&common::c_firmware("stack-probe")).unwrap();
    let painted = cell.stack_high_water.expect("the firmware's painted high-water mark");
    let probe = cell.stack_probe.clone().expect("a stack probe result");
    eprintln!("stack-probe: probe {:?} B ({}), painted {painted} B", probe.bytes, probe.note);
    let bytes = probe.bytes.unwrap_or_else(|| panic!("no probe bytes: {}", probe.note));
    let (heap_limit, top) = (symbol(&image, "__HeapLimit"), symbol(&image, "__StackTop"));
    assert_eq!(probe.region, Some([heap_limit, top]), "the region from the CMSIS symbols");
    assert!(probe.note.contains("`__HeapLimit`") || probe.note.contains("`__StackLimit`"), "{}", probe.note);
    // The heap (6000 B written from `end` up) is below the region: not one of its stores counts.
    let lowest = probe.lowest.expect("stores were probed");
    assert!(lowest >= heap_limit, "lowest store 0x{lowest:08x} below the stack region 0x{heap_limit:08x}");
    assert!(
        painted <= bytes && bytes <= painted + PROBE_SLACK,
        "probe {bytes} B vs painted {painted} B (tolerance {PROBE_SLACK} B)"
    );
    // The KAT region: its deepest store is in the stack region, and the bytes below the SP at
    // the region's entry (mb_measure's SP, followed by the plugin from the code) equal the
    // painted mark of the operation (painted below mb_measure's SP).
    let kat = cell.kats.first().expect("one KAT");
    let low = kat.stack_lowest.expect("the KAT's lowest store");
    assert!(low >= heap_limit && low < top, "KAT lowest 0x{low:08x}");
    let region_bytes = kat.stack_probe_bytes.expect("bytes below the region's entry SP");
    eprintln!("stack-probe: KAT region probe {region_bytes} B below its entry SP, painted {} B", kat.stack);
    assert!(
        kat.stack <= region_bytes && region_bytes <= kat.stack + PROBE_SLACK,
        "KAT region: probe {region_bytes} B vs painted {} B",
        kat.stack
    );

    // Part 7 on the same firmware: sound bound ≥ bound excluding panic/abort paths ≥ measured.
    let dir = tempfile::tempdir().unwrap();
    let annotations = dir.path().join("stack-probe.stack.yaml");
    // deep(12) .. deep(0): 13 activations.
    std::fs::write(&annotations, "recursion:\n  \"deep\": 13\n").unwrap();
    let board = mcubench::Board::find("mps2-an386").unwrap();
    let (report, _) = mcubench::analyze::stack::analyze(&image, board, Some(&annotations)).unwrap();
    let text = report.to_text(&[]);
    eprintln!("{text}");
    let sound = report.roots.iter().find(|r| r.role == "reset").and_then(|r| r.bound.bytes()).expect("sound bound");
    let x = report.excluding_panic.as_ref().expect("bound excluding panic/abort paths");
    let excl = x.reset.bytes().expect("bounded without panic paths");
    eprintln!(
        "stack-probe: sound {sound} B ≥ excl. panic {excl} B ≥ measured {painted} B (ratios {:.2} and {:.2})",
        f64::from(sound) / f64::from(painted),
        f64::from(excl) / f64::from(painted)
    );
    assert!(sound >= excl && excl >= painted && excl >= bytes, "sound {sound}, excl {excl}, measured {painted}");
    // The assert's failure path is the deepest of the sound bound and is what is cut.
    assert!(sound > excl, "the __assert_func path dominates the sound bound");
    assert!(x.panic_functions.iter().any(|f| f == "__assert_func"), "{:?}", x.panic_functions);
    assert!(x.fault_handlers.iter().any(|f| f == "HardFault_Handler"), "{:?}", x.fault_handlers);
    assert!(x.msp.bytes().expect("bounded MSP") < report.msp.bytes().expect("bounded MSP"));
    // The recursion dominates: 13 activations of deep's 216-byte frame.
    let top = x.top.as_ref().expect("a top contributor");
    assert_eq!((top.function.as_str(), top.frame, top.bytes), ("deep", 216, 13 * 216));
    assert!(text.contains("bound excl. panic/fault paths") && text.contains("top contributor: deep"), "{text}");
}

#[test]
fn without_a_symbol_bounding_the_stack_the_probe_says_so() {
    let cell = probe_cell("stack-probe-noregion");
    let probe = cell.stack_probe.expect("a stack probe entry");
    assert_eq!((probe.bytes, probe.lowest, probe.region), (None, None, None));
    assert!(probe.note.starts_with("stack region not found") && probe.note.contains("`_sbrk`"), "{}", probe.note);
}

/// The `stack-static` budget checks the sound bound, and the bound excluding panic/abort paths
/// only when the scenario says so (`stack-static-budget: excluding-panic`).
#[test]
fn the_stack_static_budget_uses_the_bound_excluding_panic_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    // The annotation file next to the scenario: deep(12) .. deep(0), 13 activations.
    std::fs::write(dir.path().join("budget.stack.yaml"), "recursion:\n  \"deep\": 13\n").unwrap();
    let verdict = |extra: &str| {
        let yaml = format!(
            "name: budget\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\nbudgets: {{ stack-static: 3000 B }}\n{extra}",
            common::c_firmware("stack-probe").display()
        );
        let scenario = mcubench::Scenario::from_yaml(&dir.path().join("budget.yaml"), &yaml).unwrap();
        let cell = common::only_cell(common::run(&scenario));
        let st = cell.stack_static.clone().expect("a static bound");
        let budget = cell.budgets.iter().find(|b| b.name() == "stack-static").expect("the stack-static budget").clone();
        (st.reset, st.excluding_panic.and_then(|x| x.reset), budget.actual, budget.status)
    };
    use mcubench::gate::BudgetStatus;
    let (sound, excl, actual, status) = verdict("");
    assert_eq!((actual, status), (sound.map(u64::from), BudgetStatus::Exceeded), "sound {sound:?} B > 3000 B");
    let (_, _, actual, status) = verdict("stack-static-budget: excluding-panic\n");
    assert_eq!((actual, status), (excl.map(u64::from), BudgetStatus::Ok), "excluding panic {excl:?} B <= 3000 B");
}

/// The probe follows SP from the code, not from registers, so QEMU 7.2 (plugin API v1) and
/// QEMU 10 (API v3) give the same figures: whole run and per KAT region.
#[test]
fn the_probe_is_identical_on_qemu_7_2_and_qemu_10() {
    let new = std::env::var_os("MCUBENCH_TEST_QEMU10")
        .map_or_else(|| std::path::PathBuf::from("/opt/qemu-10/usr/bin/qemu-system-arm"), Into::into);
    assert!(new.is_file(), "{}: QEMU 10 is needed beside 7.2 (bash ci/setup.sh)", new.display());
    let yaml = format!(
        "name: stack-probe\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\nstack-probe: true\n",
        common::c_firmware("stack-probe").display()
    );
    let scenario = common::scenario(&yaml);
    let on = |qemu: std::path::PathBuf| {
        let options = mcubench::RunOptions { jobs: 1, qemu, ..mcubench::RunOptions::default() };
        let cell = common::only_cell(mcubench::run_scenario(&scenario, &options));
        assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
        let kats: Vec<_> = cell.kats.iter().map(|k| (k.stack_lowest, k.stack_probe_bytes)).collect();
        (cell.stack_probe, kats)
    };
    let (old, new) = (on("qemu-system-arm".into()), on(new));
    assert!(old.1.iter().all(|k| k.1.is_some()), "{old:?}");
    assert_eq!(old, new, "QEMU 7.2 (left) vs QEMU 10");
}
