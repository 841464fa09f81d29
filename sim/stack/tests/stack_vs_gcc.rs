//! Differential test of the stack analyzer against GCC's `-fstack-usage`: for every function
//! whose .su entry is `static`, the frame the analyzer finds in the linked ELF must equal GCC's
//! number exactly. Corpus (built by tests/corpus/build.sh, reproducibly): the stack-test C
//! firmware, csmith programs with fixed seeds at -O0/-O2/-O2 -fno-inline/-Os -fno-inline, and
//! PQClean's clean C (Kyber-768, Dilithium-2, Falcon-512, SPHINCS+-SHA2-128f, FIPS 202, SHA-2)
//! from the pypqc 0.0.6.2 sdist at -O2/-Os.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use mcubench_elf::ElfImage;
use mcubench_stack::{Frame, StackOptions, analyze};
use mcubench_thumb::Arch;

/// One `.su` line: `file:line:col:function<TAB>bytes<TAB>static|dynamic|dynamic,bounded`.
struct SuEntry {
    function: String,
    bytes: u32,
    qualifier: String,
}

fn parse_su(path: &Path) -> Vec<SuEntry> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut cols = l.split('\t');
            let loc = cols.next().unwrap_or_default();
            let bytes = cols.next().and_then(|b| b.parse().ok()).unwrap_or_else(|| panic!("bad .su line {l:?}"));
            let qualifier = cols.next().unwrap_or_default().to_string();
            let function = loc.rsplit(':').next().unwrap_or_default().to_string();
            SuEntry { function, bytes, qualifier }
        })
        .collect()
}

/// GCC's .su names a clone without its trailing number: `f.constprop.0` is `f.constprop`.
fn su_name(elf_name: &str) -> String {
    match elf_name.rsplit_once('.') {
        Some((head, tail)) if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) => head.to_string(),
        _ => elf_name.to_string(),
    }
}

/// Bytes of a leading 16-bit `sub sp, #imm` (the pretend-arguments area), else 0.
fn pretend_args(image: &ElfImage, start: u32) -> u32 {
    match image.bytes_at(u64::from(start), 2) {
        Some(b) => {
            let hw = u16::from_le_bytes([b[0], b[1]]);
            if hw & 0xff80 == 0xb080 { u32::from(hw & 0x7f) * 4 } else { 0 }
        }
        None => 0,
    }
}

fn corpus() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("stack-corpus");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/build.sh");
    let status = Command::new("bash").arg(&script).arg(&dir).status().expect("run tests/corpus/build.sh");
    assert!(status.success(), "{} failed: install its prerequisites (see the script header)", script.display());
    dir
}

#[derive(Default)]
struct Tally {
    compared: usize,
    equal: usize,
    skipped_dynamic: usize,
    skipped_absent: usize,
    skipped_ambiguous: usize,
    /// Analyzer = GCC + the pretend-arguments area GCC leaves out.
    pretend_args: usize,
    mismatches: Vec<String>,
}

fn compare(item: &Path, options: &StackOptions, tally: &mut Tally) {
    let image = ElfImage::read(&item.join("prog.elf")).expect("corpus ELF parses");
    let report = analyze(&image, options).expect("decoder");
    // ELF function name (as .su spells it) -> frames found.
    let mut by_su: BTreeMap<String, Vec<(&Frame, u32)>> = BTreeMap::new();
    for f in &report.functions {
        by_su.entry(su_name(&f.name)).or_default().push((&f.frame, f.start));
    }
    let mut entries = Vec::new();
    for e in std::fs::read_dir(item).expect("corpus item") {
        let p = e.expect("dir entry").path();
        if p.extension().is_some_and(|x| x == "su") {
            entries.extend(parse_su(&p));
        }
    }
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &entries {
        *count.entry(e.function.as_str()).or_default() += 1;
    }
    for e in &entries {
        if e.qualifier != "static" {
            tally.skipped_dynamic += 1;
            continue;
        }
        let Some(frames) = by_su.get(&e.function) else {
            tally.skipped_absent += 1; // inlined everywhere or removed by the linker
            continue;
        };
        if frames.len() != 1 || count[e.function.as_str()] != 1 {
            tally.skipped_ambiguous += 1; // same name in several files or several clones
            continue;
        }
        tally.compared += 1;
        let (frame, start) = frames[0];
        match frame {
            Frame::Known { bytes } if *bytes == e.bytes => tally.equal += 1,
            Frame::Known { bytes } if *bytes == e.bytes + pretend_args(&image, start) => {
                // GCC's .su leaves out the "pretend arguments" area (register arguments of a
                // variadic or struct-by-value parameter spilled by a leading `sub sp, #n`
                // before the registers are saved); the SP excursion includes it.
                tally.pretend_args += 1;
            }
            other => tally.mismatches.push(format!(
                "{}: {}: GCC {} B static, analyzer {other:?}",
                item.file_name().unwrap_or_default().to_string_lossy(),
                e.function,
                e.bytes
            )),
        }
    }
}

#[test]
fn frames_equal_gcc_stack_usage() {
    let dir = corpus();
    let mut items: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.join("prog.elf").exists())
        .collect();
    items.sort();
    let mut tally = Tally::default();
    let mut per_group: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for item in &items {
        let name = item.file_name().unwrap_or_default().to_string_lossy().to_string();
        let hard_float = name.starts_with("fw-");
        let options = StackOptions { arch: Arch::V7EM, fpu: hard_float, ..StackOptions::default() };
        let before = (tally.compared, tally.equal);
        compare(item, &options, &mut tally);
        let group = name.split('-').next().unwrap_or_default().to_string();
        let g = per_group.entry(group).or_default();
        g.0 += tally.compared - before.0;
        g.1 += tally.equal - before.1;
    }
    eprintln!(
        "stack vs gcc -fstack-usage: {} ELFs, {} functions compared, {} equal, {} equal but for the pretend-args \
         area GCC omits, {} mismatches; skipped: {} dynamic, {} not in the ELF, {} ambiguous names",
        items.len(),
        tally.compared,
        tally.equal,
        tally.pretend_args,
        tally.mismatches.len(),
        tally.skipped_dynamic,
        tally.skipped_absent,
        tally.skipped_ambiguous
    );
    for (g, (c, e)) in &per_group {
        eprintln!("  {g}: {c} compared, {e} equal");
    }
    for m in &tally.mismatches {
        eprintln!("  MISMATCH {m}");
    }
    assert!(items.len() >= 30, "corpus incomplete: {} ELFs", items.len());
    assert!(tally.compared >= 500, "too few functions compared: {}", tally.compared);
    assert!(tally.mismatches.is_empty(), "{} frames differ from GCC's .su (listed above)", tally.mismatches.len());
}
