//! Whole-program bounds of ordinary GCC + newlib firmware with no user annotations: a corpus
//! built here (tests/corpus/build-newlib-real.sh: newlib and newlib-nano, printf, malloc,
//! soft-double, semihosting exit through rdimon; -O0, -O2, -Os) is bounded with the shipped
//! newlib annotation pack alone, and every bound (reset root and MSP) is at least the stack the
//! firmware was measured to use under QEMU (painted high-water mark, printed by its `_exit`).
#![cfg(feature = "full")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcubench_elf::ElfImage;
use mcubench_stack::annotations::AnnotationFile;
use mcubench_stack::{StackOptions, analyze};

/// The corpus directory, built once per test binary.
fn corpus_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("newlib-real");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/build-newlib-real.sh");
        let ok = Command::new("bash").arg(script).arg(&out).stdout(Stdio::null()).status().expect("run script");
        assert!(ok.success(), "build-newlib-real.sh failed (needs arm-none-eabi-gcc and libnewlib-arm-none-eabi)");
        out
    })
}

fn corpus() -> Vec<PathBuf> {
    let out = corpus_dir();
    let mut elfs: Vec<PathBuf> = std::fs::read_dir(out)
        .expect("corpus dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "elf"))
        .collect();
    elfs.sort();
    assert_eq!(elfs.len(), 7, "{elfs:?}");
    elfs
}

/// Painted stack high-water mark below the initial SP, as the firmware's `_exit` prints it.
fn measured(elf: &Path) -> u32 {
    let text = common::run_semihosting(elf, &["-machine", "mps2-an386", "-cpu", "cortex-m4"]);
    common::stack_hwm(elf, &text)
}

#[test]
fn newlib_firmware_is_bounded_without_annotations_and_soundly() {
    let mut rows = Vec::new();
    for elf in corpus() {
        let name = elf.file_stem().unwrap().to_string_lossy().into_owned();
        let image = ElfImage::read(&elf).expect("ELF parses");
        let r = analyze(&image, &StackOptions::default()).expect("decoder");
        let (bound, msp) = common::bounded_by_pack(&name, &r, "newlib-3.3");
        rows.push(common::sound_row(&name, bound, msp, measured(&elf)));
    }
    println!("{}", rows.join("\n"));
}

#[test]
fn a_pack_for_another_library_version_is_reported_not_applied() {
    // newlib 3.3's stdio with newlib 4's `_fwalk_sglue` linked: the symbols say "not 3.3".
    let elf = corpus_dir().join("other-version/newlib-full-O2-sglue.elf");
    let image = ElfImage::read(&elf).expect("ELF parses");
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    let pack = r.packs.iter().find(|p| p.pack == "newlib-3.3").unwrap_or_else(|| panic!("not reported: {:?}", r.packs));
    assert_eq!(pack.applied, 0, "{pack:?}");
    assert!(pack.notes.iter().any(|n| n.starts_with("not applied") && n.contains("_fwalk_sglue")), "{pack:?}");
    let text = r.to_text(&[]);
    assert!(text.contains("annotation pack newlib-3.3") && text.contains("0 entries applied"), "{text}");
    // Without the pack, newlib's recursions come back, all of them in this one run (each with
    // the calls of its cycle), and the reset root is unbounded.
    let reset = r.roots.iter().find(|x| x.role == "reset").expect("reset root");
    assert!(reset.bound.bytes().is_none(), "{:?}", reset.bound);
    let cycles = r.unresolved.iter().filter(|u| !u.cycle.is_empty()).count();
    assert!(cycles >= 3, "{cycles} cycles listed:\n{}", r.annotation_template());
    let t = r.annotation_template();
    println!("{t}");
    // Filled in with what newlib's sources say (the facts the pack would have given) and
    // pasted, the one run's entries bound the firmware.
    let hooks = "[__swrite, __sseek, __sread, __sclose]";
    let filled = t
        .replace("DEPTH", "2")
        .replace(
            "{ site: \"__sflush_r\", targets: [TARGET] }",
            &format!("{{ site: \"__sflush_r\", targets: {hooks} }}"),
        )
        .replace(
            "{ site: \"_fclose_r@1\", targets: [TARGET] }",
            &format!("{{ site: \"_fclose_r@1\", targets: {hooks} }}"),
        )
        .replace(
            "{ site: \"_fwalk_reent@1\", targets: [TARGET] }",
            "{ site: \"_fwalk_reent@1\", targets: [_fflush_r, _fclose_r] }",
        );
    assert!(!filled.contains("TARGET"), "{filled}");
    let file = AnnotationFile::parse(Path::new("other-version.stack.yaml"), &filled).expect("parses");
    let (annotations, _) = file.resolve(&image).expect("resolves");
    let r = analyze(&image, &StackOptions { annotations, ..StackOptions::default() }).expect("decoder");
    let reset = r.roots.iter().find(|x| x.role == "reset").expect("reset root");
    assert!(reset.bound.bytes().is_some(), "{}", r.to_text(&[]));
    assert!(r.unresolved.is_empty(), "{}", r.annotation_template());
    println!("pasted and filled in: reset {:?} B", reset.bound.bytes());
}
