//! Whole-program bounds of GCC + newlib 4 firmware with no user annotations: the program of the
//! newlib 3.3 corpus (tests/corpus/newlib-real/main.c: printf, malloc, soft-double, semihosting
//! exit through rdimon) built by tests/corpus/build-newlib4.sh against newlib 4.5 (Debian 13's
//! libnewlib-arm-none-eabi, the newlib of the Arm GNU Toolchain 14.x, unpacked by ci/setup.sh
//! under /opt/newlib-4): newlib and newlib-nano, -O0/-O2/-Os, Cortex-M4 soft- and hard-float,
//! Cortex-M0 and Cortex-M33 multilibs. Each is bounded with the shipped newlib-4 pack alone, and
//! every bound (reset root and MSP) is at least the stack the firmware was measured to use under
//! QEMU (painted high-water mark, printed by its `_exit`) on the board of its core. Programs
//! whose symbols say another newlib, or that link no stdio, get the pack of their version only.
#![cfg(feature = "full")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcubench_elf::ElfImage;
use mcubench_stack::{Arch, StackOptions, analyze};

/// Where ci/setup.sh unpacks newlib 4.
fn prefix() -> PathBuf {
    PathBuf::from(std::env::var("MCUBENCH_NEWLIB4_PREFIX").unwrap_or_else(|_| "/opt/newlib-4".into()))
}

/// The corpus directory, built once per test binary.
fn corpus_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let version = prefix().join("usr/include/newlib/_newlib_version.h");
        let text = std::fs::read_to_string(&version).unwrap_or_else(|e| {
            panic!("newlib 4 is not installed ({}: {e}): run ci/setup.sh, which unpacks it there", version.display())
        });
        assert!(text.contains("#define __NEWLIB__ 4"), "{} is not newlib 4: run ci/setup.sh", version.display());
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("newlib4");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/build-newlib4.sh");
        let ok = Command::new("bash").arg(script).arg(&out).stdout(Stdio::null()).status().expect("run script");
        assert!(ok.success(), "build-newlib4.sh failed (needs arm-none-eabi-gcc; newlib 4 from ci/setup.sh)");
        out
    })
}

fn corpus() -> Vec<PathBuf> {
    let mut elfs: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "elf"))
        .collect();
    elfs.sort();
    assert_eq!(elfs.len(), 13, "{elfs:?}");
    elfs
}

/// The core of a corpus ELF (its name's prefix): analysis options and the QEMU board.
fn core(name: &str) -> (Arch, bool, [&'static str; 4]) {
    match name.split('-').next() {
        Some("m0") => (Arch::V6M, false, ["-machine", "microbit", "-cpu", "cortex-m0"]),
        Some("m33") => (Arch::V8MMain, true, ["-machine", "mps2-an505", "-cpu", "cortex-m33"]),
        Some("m4" | "m4hf") => (Arch::V7EM, true, ["-machine", "mps2-an386", "-cpu", "cortex-m4"]),
        other => panic!("{name}: unknown core {other:?}"),
    }
}

/// Painted stack high-water mark below the initial SP, as the firmware's `_exit` prints it.
fn measured(elf: &Path, machine: &[&str]) -> u32 {
    let text = common::run_semihosting(elf, machine);
    // The program ran to its end: printf of integers and strings, strdup/puts.
    assert!(
        text.contains("24 items, mean weight 29.750, first item-3, last item-164") && text.contains("item-87"),
        "{text}"
    );
    common::stack_hwm(elf, &text)
}

#[test]
fn newlib4_firmware_is_bounded_without_annotations_and_soundly() {
    let mut rows = Vec::new();
    for elf in corpus() {
        let name = elf.file_stem().unwrap().to_string_lossy().into_owned();
        let (arch, fpu, machine) = core(&name);
        let image = ElfImage::read(&elf).expect("ELF parses");
        // newlib 4's stdio, not 3.x's, is what was linked.
        let symbols: Vec<&str> = image.symbols().iter().map(|s| s.name.as_str()).collect();
        assert!(symbols.contains(&"_fwalk_sglue") && !symbols.contains(&"_fwalk_reent"), "{name}");
        let r = analyze(&image, &StackOptions { arch, fpu, ..StackOptions::default() }).expect("decoder");
        let (bound, msp) = common::bounded_by_pack(&name, &r, "newlib-4");
        // The 3.3 pack is not applied, and its "another version" note is not shown when the
        // newlib-4 pack was applied.
        assert!(r.packs.iter().all(|p| p.pack != "newlib-3.3"), "{name}: {:?}", r.packs);
        rows.push(common::sound_row(&name, bound, msp, measured(&elf, &machine)));
    }
    println!("{}", rows.join("\n"));
}

#[test]
fn the_newlib4_pack_is_reported_not_applied_when_the_symbols_say_another_version() {
    // newlib 4.5 with newlib 3.x's `_cleanup_r` linked: neither pack applies, both say why.
    let elf = corpus_dir().join("other-version/m4-full-O2-cleanup_r.elf");
    let image = ElfImage::read(&elf).expect("ELF parses");
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    let pack = r.packs.iter().find(|p| p.pack == "newlib-4").unwrap_or_else(|| panic!("not reported: {:?}", r.packs));
    assert_eq!(pack.applied, 0, "{pack:?}");
    assert!(pack.notes.iter().any(|n| n.starts_with("not applied") && n.contains("_cleanup_r")), "{pack:?}");
    let old = r.packs.iter().find(|p| p.pack == "newlib-3.3").unwrap_or_else(|| panic!("not reported: {:?}", r.packs));
    assert!(old.applied == 0 && old.notes.iter().any(|n| n.contains("_fwalk_sglue")), "{old:?}");
    let text = r.to_text(&[]);
    assert!(text.contains("annotation pack newlib-4") && text.contains("0 entries applied"), "{text}");
    // Without a pack, newlib 4's recursions through stdio come back, listed in one run.
    let reset = r.roots.iter().find(|x| x.role == "reset").expect("reset root");
    assert!(reset.bound.bytes().is_none(), "{:?}", reset.bound);
    assert!(r.unresolved.iter().filter(|u| !u.cycle.is_empty()).count() >= 3, "{}", r.annotation_template());
}

#[test]
fn without_stdio_the_reentrancy_data_tells_the_newlib_version() {
    // malloc, errno and strtol, no stdio and no exit: only `_impure_data` (global in 4.x) or
    // its absence tells the versions apart; exactly the pack of the linked version is reported.
    for (elf, pack) in [("newlib4-nostdio", "newlib-4"), ("newlib3-nostdio", "newlib-3.3")] {
        let image = ElfImage::read(&corpus_dir().join("nostdio").join(format!("{elf}.elf"))).expect("ELF parses");
        let symbols: Vec<&str> = image.symbols().iter().map(|s| s.name.as_str()).collect();
        assert!(symbols.contains(&"_impure_ptr") && !symbols.contains(&"__sinit"), "{elf}: {symbols:?}");
        let r = analyze(&image, &StackOptions::default()).expect("decoder");
        let names: Vec<&str> = r.packs.iter().map(|p| p.pack.as_str()).filter(|p| p.starts_with("newlib")).collect();
        assert_eq!(names, [pack], "{elf}: {:?}", r.packs);
        assert!(r.packs.iter().all(|p| p.notes.is_empty()), "{elf}: {:?}", r.packs);
    }
}
