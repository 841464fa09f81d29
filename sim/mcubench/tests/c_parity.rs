//! C on par with Rust (issue #11, point 6): firmware using `mcubench.h` gets an exact instruction
//! count and a cycle estimate for every KAT through the header's region markers, in every
//! optimisation level, with and without LTO, whichever file defines MCUBENCH_IMPL; those counts
//! agree with a scenario's `regions:` measurement of the same KAT function; hard-float firmware
//! runs because the example start-up enables the FPU, and the deliberate variant that leaves it
//! off faults with a message that says NOCP and what to do.
//!
//! Firmware: firmware/c/parity (the matrix parity-<same|separate>-<O0|O2|O3|Os>[-lto].elf),
//! firmware/c/kat-float (kat-float.elf, kat-float-fpu-off.elf), built by firmware/c/build.sh.

// Full test tier: needs QEMU and the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use mcubench::Scenario;
use mcubench::judge::verdict::Outcome;
use mcubench::report::{CellReport, CountSource};
use mcubench_elf::ElfImage;

/// The parity firmware's KATs, each with the function that is its whole operation (firmware/c/
/// parity/ops.c), called once per run.
const KATS: [(&str, &str); 4] = [
    ("crc32/empty", "kat_crc32_empty"),
    ("crc32/a", "kat_crc32_a"),
    ("crc32/check-123456789", "kat_crc32_check"),
    ("crc32/quick-brown-fox", "kat_crc32_fox"),
];

const OPTS: [&str; 4] = ["O0", "O2", "O3", "Os"];

/// A scenario for `elf` (copied into `dir`) on mps2-an386, measuring each KAT's function as a
/// function region too.
fn scenario(dir: &Path, elf: &Path) -> Scenario {
    let local = dir.join(elf.file_name().unwrap());
    std::fs::copy(elf, &local).unwrap();
    let regions: Vec<&str> = KATS.iter().map(|(_, f)| *f).collect();
    let yaml = format!(
        "name: c-parity\nfirmware: {{ elf: {} }}\nboards: [mps2-an386]\nregions: [{}]\n",
        local.file_name().unwrap().to_string_lossy(),
        regions.join(", ")
    );
    Scenario::from_yaml(&dir.join(format!("{}.yaml", elf.file_stem().unwrap().to_string_lossy())), &yaml).unwrap()
}

/// Per KAT: (instructions, cycles) between the markers and (instructions, cycles) of the one call
/// of its function.
type Counts = Vec<(u64, u64, u64, u64)>;

/// Runs `elf` and checks what every build must show: a pass; every KAT counted exactly by the
/// plugin with a cycle estimate; each KAT function called once (min = max); and the KAT's count
/// between the markers equal to its function's per-call count plus one marker overhead, the same
/// for every KAT of the build (instructions and cycles), whose instruction count is the one the
/// code shows ([`static_marker_overhead`]). Returns the counts and the overhead.
fn check_build(dir: &Path, name: &str) -> (Counts, (u64, u64)) {
    let elf = common::c_firmware(name);
    markers_are_intact(&elf);
    let cell = common::only_cell(common::run(&scenario(dir, &elf)));
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{name}: {}", cell.verdict.message);
    let counts = counts(name, &cell);
    let overheads: Vec<(u64, u64)> = counts.iter().map(|&(i, c, fi, fc)| (i - fi, c - fc)).collect();
    assert!(
        overheads.iter().all(|o| *o == overheads[0]),
        "{name}: the KAT counts minus their function's call differ (instructions, cycles): {overheads:?}"
    );
    // The marker overhead (docs/src/reference/protocol.md, "Region markers"), as the code says:
    // the return of mcubench_region_enter, the call of the operation, the call of
    // mcubench_region_exit and its instructions up to the store; more at -O0 (frame set-up).
    assert_eq!(overheads[0].0, static_marker_overhead(&elf), "{name}: marker overhead");
    (counts, overheads[0])
}

fn counts(name: &str, cell: &CellReport) -> Counts {
    assert_eq!(cell.kats.len(), KATS.len(), "{name}");
    KATS.iter()
        .map(|(id, function)| {
            let k = cell.kats.iter().find(|k| k.id == *id).unwrap_or_else(|| panic!("{name}: no KAT {id}"));
            assert_eq!(k.instructions_source, CountSource::Plugin, "{name} {id}: exact, from the region markers");
            let cycles = k.cycles.unwrap_or_else(|| panic!("{name} {id}: no cycle estimate"));
            let r = cell.regions.iter().find(|r| r.name == *function).unwrap();
            assert_eq!((r.calls, r.open), (1, 0), "{name} {function}");
            let rc = r.cycles.expect("function region cycles");
            assert_eq!((r.instructions.min, rc.min), (r.instructions.max, rc.max), "{name} {function}: one call");
            (k.instructions, cycles, r.instructions.min, rc.min)
        })
        .collect()
}

/// The plugin watches the stores of the functions named exactly `mcubench_region_enter` and
/// `mcubench_region_exit`: no clone (`.constprop.N`, `.isra.N`, `.part.N`) or LTO rename
/// (`.lto_priv.N`) of them may exist, and both must be global functions.
fn markers_are_intact(elf: &Path) {
    let image = ElfImage::read(elf).unwrap();
    let names: Vec<&str> = image
        .symbols()
        .iter()
        .map(|s| s.name.as_str())
        .filter(|n| n.starts_with("mcubench_region_") || n.starts_with("MCUBENCH_REGIONS"))
        .collect();
    assert_eq!(
        names.iter().copied().collect::<std::collections::BTreeSet<_>>(),
        ["MCUBENCH_REGIONS", "mcubench_region_enter", "mcubench_region_exit"].into(),
        "{}: {names:?}",
        elf.display()
    );
    for marker in ["mcubench_region_enter", "mcubench_region_exit"] {
        let s = image.symbol(marker).unwrap();
        assert_eq!(s.binding, mcubench_elf::SymbolBinding::Global, "{}: {marker} {s:?}", elf.display());
    }
}

/// The matrix: -O0/-O2/-O3/-Os × without/with -flto × MCUBENCH_IMPL in the KAT file or in a file
/// of its own. Every build runs and has exact counts and cycles per KAT that agree with the
/// function regions; the two layouts give the same instruction counts at each optimisation level.
#[test]
fn c_kats_are_exact_in_every_optimisation_lto_and_file_layout() {
    let dir = tempfile::tempdir().unwrap();
    let mut table = BTreeMap::new();
    for opt in OPTS {
        for lto in ["", "-lto"] {
            let (same, overhead) = check_build(dir.path(), &format!("parity-same-{opt}{lto}"));
            let (separate, overhead_separate) = check_build(dir.path(), &format!("parity-separate-{opt}{lto}"));
            // The code is the same in both layouts: so are the instruction counts and the marker
            // overhead. Cycle estimates may differ by a cycle or two where the linker placed
            // the code and its literals at other addresses (fetch alignment).
            assert_eq!(overhead, overhead_separate, "-{opt}{lto}: marker overhead");
            for (((id, _), a), b) in KATS.iter().zip(&same).zip(&separate) {
                assert_eq!(
                    (a.0, a.2),
                    (b.0, b.2),
                    "-{opt}{lto} {id}: the file that defines MCUBENCH_IMPL changes no count"
                );
                assert!(a.1.abs_diff(b.1) <= 2 + a.1 / 200, "-{opt}{lto} {id}: cycles {} vs {}", a.1, b.1);
            }
            table.insert(format!("-{opt}{lto}"), (same, overhead));
        }
    }
    for (build, (counts, overhead)) in &table {
        eprintln!(
            "{build:>9}: KAT (instructions, cycles) {:?}, marker overhead {overhead:?}",
            counts.iter().map(|c| (c.0, c.1)).collect::<Vec<_>>()
        );
    }
    // The marker overhead is one property of the markers and the optimiser, not of the KAT: the
    // same at -O2, -O3 and -Os, with and without LTO.
    let optimised: Vec<_> = table.iter().filter(|(b, _)| !b.starts_with("-O0")).map(|(_, (_, o))| *o).collect();
    assert!(optimised.iter().all(|o| *o == optimised[0]), "{optimised:?}");
}

/// The evidence of issue #11: C KAT firmware with `mcubench.h` at -O3 and MCUBENCH_IMPL in the
/// same file (the layout whose markers GCC used to clone into `.constprop.0`, a setup error)
/// shows exact instructions and cycles per KAT, equal to what `regions: [<the KAT's function>]`
/// measures for that function's one call, plus the constant marker overhead.
#[test]
fn c_kats_at_o3_equal_the_function_regions_of_the_same_kats() {
    let dir = tempfile::tempdir().unwrap();
    // check_build: each KAT's count minus its function's call is the marker overhead read off
    // the ELF's code.
    let (counts, (oi, oc)) = check_build(dir.path(), "parity-same-O3");
    eprintln!("parity-same-O3 (marker overhead {oi} instructions, {oc} cycles):");
    eprintln!(
        "{:<24} {:>12} {:>12} {:>14} {:>14}",
        "KAT", "instructions", "cycles", "regions: insns", "regions: cycles"
    );
    for ((id, _), (i, c, fi, fc)) in KATS.iter().zip(&counts) {
        eprintln!("{id:<24} {i:>12} {c:>12} {fi:>14} {fc:>14}");
        assert_eq!((*i, *c), (fi + oi, fc + oc), "{id}");
    }
}

/// The marker overhead of a region opened by `mb_measure`, counted from the code (the protocol's
/// definition): the instructions of `mcubench_region_enter` after its store up to its return,
/// `mb_measure`'s instructions after the call of enter up to and including the call of exit (the
/// operation's call among them; the operation's own instructions are its function region), and
/// those of `mcubench_region_exit` up to and including its store. All straight-line for an id
/// below 256 (the bounds checks' branches are not taken).
fn static_marker_overhead(elf: &Path) -> u64 {
    use mcubench_thumb::{Arch, Class, Decoder, Flow, Insn};
    let image = ElfImage::read(elf).unwrap();
    let decoder = Decoder::new(Arch::V7EM, false).unwrap();
    let code = |name: &str| -> (u32, Vec<Insn>) {
        let s = image.symbol(name).unwrap_or_else(|| panic!("no {name}"));
        let bytes = image.bytes_at(s.address, s.size).unwrap();
        // Stops at the literal pool (data) with an error: the code before it is what counts.
        (s.address as u32, decoder.decode_block(s.address as u32, bytes).0)
    };
    let is_store = |i: &Insn| matches!(i.class, Class::Store { .. });
    let (enter, enter_code) = code("mcubench_region_enter");
    let (exit, exit_code) = code("mcubench_region_exit");
    // The last store is the one into MCUBENCH_REGIONS (at -O0 the argument is spilled first).
    let store = enter_code.iter().rposition(is_store).expect("enter's store");
    let ret = store + enter_code[store..].iter().position(|i| i.flow == Flow::Return).expect("enter's return");
    let after_enter_store = (ret - store) as u64;
    let through_exit_store = exit_code.iter().rposition(is_store).expect("exit's store") as u64 + 1;
    let measure = image.symbols().iter().find(|s| s.name.starts_with("mb_measure")).expect("mb_measure").name.clone();
    let (_, m) = code(&measure);
    let call_of = |target: u32| m.iter().position(|i| i.flow == Flow::Call { target }).expect("marker call");
    let (a, b) = (call_of(enter), call_of(exit));
    assert!(
        m[a + 1..b].iter().all(|i| matches!(i.flow, Flow::Next | Flow::Call { .. } | Flow::CallIndirect { .. })),
        "{measure}: straight-line between the marker calls"
    );
    after_enter_store + (b - a) as u64 + through_exit_store
}

/// The example C firmware (firmware/c/kat-crc32, -O2) gets its counts from the markers too.
#[test]
fn the_example_c_kat_firmware_is_counted_by_the_plugin() {
    let elf = common::c_firmware("kat-crc32");
    markers_are_intact(&elf);
    let scenario = Scenario::for_elf(
        &elf,
        mcubench::Board::find("mps2-an386").unwrap(),
        Default::default(),
        std::time::Duration::from_secs(20),
    );
    let cell = common::only_cell(common::run(&scenario));
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    assert_eq!(cell.kats.len(), 4);
    for k in &cell.kats {
        assert_eq!(k.instructions_source, CountSource::Plugin, "{}", k.id);
        assert!(k.cycles.is_some_and(|c| c >= k.instructions), "{}: {:?}", k.id, k.cycles);
    }
}

fn run_elf(name: &str) -> CellReport {
    let scenario = Scenario::for_elf(
        &common::c_firmware(name),
        mcubench::Board::find("mps2-an386").unwrap(),
        Default::default(),
        std::time::Duration::from_secs(20),
    );
    common::only_cell(common::run(&scenario))
}

/// Hard-float C firmware (VFP instructions, s-register calling convention) passes: the example
/// start-up enabled the FPU.
#[test]
fn hard_float_c_firmware_runs_because_the_startup_enables_the_fpu() {
    let elf = common::c_firmware("kat-float");
    let image = ElfImage::read(&elf).unwrap();
    // Really hard float: the ELF says so (EF_ARM_ABI_FLOAT_HARD, e_flags bit 10).
    let flags = u32::from_le_bytes(std::fs::read(&elf).unwrap()[36..40].try_into().unwrap());
    assert_ne!(flags & 0x400, 0, "kat-float.elf is not hard-float: e_flags {flags:#x}");
    assert!(image.symbol("main").is_some());
    let cell = run_elf("kat-float");
    assert_eq!(cell.verdict.outcome, Outcome::Pass, "{}", cell.verdict.message);
    let ids: Vec<&str> = cell.kats.iter().map(|k| k.id.as_str()).collect();
    assert_eq!(ids, ["float/dot8", "float/sqrt2", "float/div-1-3", "float/horner"]);
    assert!(cell.kats.iter().all(|k| k.instructions_source == CountSource::Plugin && k.cycles.is_some()));
}

/// The same firmware with the FPU left off (-DSTARTUP_FPU_OFF): its first FP instruction is a
/// UsageFault (NOCP) escalated to HardFault (FORCED), and the verdict says so in words.
#[test]
fn hard_float_without_the_fpu_enabled_faults_with_nocp_in_words() {
    let cell = run_elf("kat-float-fpu-off");
    assert_eq!(cell.verdict.outcome, Outcome::Fault, "{}", cell.verdict.message);
    let m = &cell.verdict.message;
    eprintln!("{m}");
    assert!(m.starts_with("HardFault at pc=0x"), "{m}");
    assert!(
        m.contains(
            "cfsr=0x00080000 (UsageFault: NOCP — coprocessor access while the FPU is disabled: enable it in CPACR"
        ),
        "{m}"
    );
    assert!(m.contains("hfsr=0x40000000 (FORCED — a MemManage, BusFault or UsageFault escalated to HardFault"), "{m}");
}
