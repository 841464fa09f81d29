//! Differential test of the stack analyzer against LLVM's `.stack_sizes` section: the Rust KAT
//! firmware (firmware/kat) is built once per Thumb target with `-Z emit-stack-sizes` and, for
//! every function with an entry, the frame the analyzer finds in the linked ELF must equal
//! LLVM's number exactly.
//!
//! Build: stable toolchain with `RUSTC_BOOTSTRAP=1` (test only), one target directory for every
//! target and opt-level, `firmware/target/stack-sizes` (the host-side crates, proc macros and
//! build scripts, are most of a cold build and are compiled once; each ELF is analyzed before
//! the next build relinks the path; sim/thumb/tests/repo_firmware.rs decodes the opt-level 3
//! ELFs of the same directory, built with the same command), the flag passed with `cargo --config
//! target.<triple>.rustflags=[...]`, which cargo appends to firmware/.cargo/config.toml's list
//! (never the `RUSTFLAGS` variable: it would drop `-Tlink.x`). The triple is written as a
//! dotted key path (`target.thumbv8m.main-none-eabihf.rustflags`), as config.toml writes it:
//! cargo looks target tables up by splitting `target.<triple>` at dots, so the quoted form
//! `target."thumbv8m.main-none-eabihf"` is silently ignored for triples with a dot (checked
//! with `cargo build -v`: no `-Z emit-stack-sizes` on the rustc line).
//!
//! The linked ELF keeps `.stack_sizes`: cortex-m-rt's link.x discards only `.ARM.exidx*`, and
//! the section (non-alloc, `SHF_LINK_ORDER` to `.text`) is placed as an orphan by the linker
//! with its relocations applied. Each entry is a 4-byte function address (Thumb bit set) and
//! a ULEB128 size: the bytes the function's prologue allocates (LLVM's `MFI.getStackSize()`),
//! with no entry for functions with a variable-sized object (alloca) or for assembly.
//! Functions without an entry: cortex-m-rt's assembly (`Reset`, `HardFault`) and the
//! precompiled compiler_builtins (`memcpy`, `__aeabi_*`, `__udivmoddi4`).
//!
//! Default: opt-levels 3 (release) and s (size profile), all equal. `STACK_LLVM_OPT_LEVELS=
//! 3,s,z,1,0` widens the run; there, the known differences are: opt-level z saves LR around
//! calls to machine-outlined functions (`str.w lr, [sp, #-8]!`) after the frame was sized, so
//! LLVM's number is 8 B short (counted apart, analyzer right); opt-level z outlines epilogues
//! (`OUTLINED_FUNCTION_n` pops its tail-caller's frame and returns: the analyzer reports it
//! unknown, LLVM 0 B) and if-converts whole bodies into IT blocks on one condition (the
//! analyzer does not correlate separate IT blocks: divergent); opt-level 0 keeps
//! `udf #254` traps (0xdefe), which the decoder does not decode yet (capstone names it `trap`).

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcubench_elf::ElfImage;
use mcubench_stack::{Frame, StackOptions, analyze};
use mcubench_thumb::Arch;

/// (triple, architecture, FPU).
const TARGETS: &[(&str, Arch, bool)] = &[
    ("thumbv7em-none-eabihf", Arch::V7EM, true),
    ("thumbv6m-none-eabi", Arch::V6M, false),
    ("thumbv7m-none-eabi", Arch::V7M, false),
    ("thumbv8m.main-none-eabihf", Arch::V8MMain, true),
];

/// The flag, and the stable toolchain's symbol mangling: `RUSTC_BOOTSTRAP=1` makes rustc mangle
/// with v0 as a nightly does, which orders functions differently; with legacy mangling the
/// loaded bytes equal a plain stable build's (checked: same SHA-256 of `.vector_table`, `.text`,
/// `.rodata` and `.data` for thumbv6m), so repo_firmware.rs decodes what users build.
const STACK_SIZES_RUSTFLAGS: &str =
    r#""-Z","emit-stack-sizes","-Z","unstable-options","-C","symbol-mangling-version=legacy""#;

/// firmware/Cargo.toml's `[profile.release] opt-level`.
const RELEASE_OPT_LEVEL: &str = "3";
/// Opt-levels built by default: the release profile's and the size profile's.
const OPT_LEVELS: &[&str] = &["3", "s"];

fn firmware_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../firmware")
}

/// Builds firmware/kat for `triple` with `-Z emit-stack-sizes` at the release profile's
/// opt-level or `opt` (`"s"`, `"z"`, `"1"`, ...); returns the ELF's path.
fn build(triple: &str, opt: Option<&str>) -> PathBuf {
    let dir = firmware_dir();
    let target_dir = dir.join("target").join("stack-sizes");
    let mut cmd = Command::new("cargo");
    cmd.current_dir(&dir)
        .args(["build", "--release", "-p", "kat", "--bin", "kat", "--target", triple, "--target-dir"])
        .arg(&target_dir)
        .arg("--config")
        .arg(format!(r#"target.{triple}.rustflags=[{STACK_SIZES_RUSTFLAGS}]"#));
    if let Some(o) = opt {
        let value = if o.bytes().all(|b| b.is_ascii_digit()) { o.to_string() } else { format!("\"{o}\"") };
        cmd.arg("--config").arg(format!("profile.release.opt-level={value}"));
    }
    let out = cmd
        .env("RUSTC_BOOTSTRAP", "1")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("MCUBENCH_MEMORY_X")
        .stdin(Stdio::null())
        .output()
        .expect("run cargo");
    assert!(
        out.status.success(),
        "building firmware/kat for {triple} failed (is the target installed? `bash ci/setup.sh`):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    target_dir.join(triple).join("release").join("kat")
}

/// Entries of `.stack_sizes`: function address (Thumb bit cleared) → bytes.
fn stack_sizes(image: &ElfImage) -> Vec<(u32, u32)> {
    let section = image.section_by_name(".stack_sizes").expect("the linked ELF keeps .stack_sizes");
    let data = image.section_data(section);
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let addr = u32::from_le_bytes(data[pos..pos + 4].try_into().expect("4-byte address"));
        pos += 4;
        let mut size = 0u64;
        let mut shift = 0;
        loop {
            let b = data[pos];
            pos += 1;
            size |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        out.push((addr & !1, u32::try_from(size).expect("stack size fits u32")));
    }
    out
}

/// The function holds `str.w lr, [sp, #-8]!` (halfwords 0xf84d 0xed08).
fn saves_lr_for_outlined_call(image: &ElfImage, start: u32, end: u32) -> bool {
    let Some(code) = image.bytes_at(u64::from(start), u64::from(end - start)) else { return false };
    code.chunks_exact(2).collect::<Vec<_>>().windows(2).any(|w| w[0] == [0x4d, 0xf8] && w[1] == [0x08, 0xed])
}

#[derive(Default, Debug)]
struct Tally {
    entries: usize,
    compared: usize,
    equal: usize,
    /// Entries at address 0: functions the linker discarded (`--gc-sections`) whose entry
    /// stayed with a relocation against a discarded section.
    discarded: usize,
    /// Analyzer = LLVM + 8: the function saves LR around a call to a machine-outlined function
    /// (`str.w lr, [sp, #-8]!`, opt-level z), which the outliner inserts after the frame
    /// was sized: LLVM's number leaves those 8 bytes out.
    outliner_lr_save: usize,
    mismatches: Vec<String>,
}

fn compare(triple: &str, opt: Option<&str>, arch: Arch, fpu: bool) -> Tally {
    let elf = build(triple, opt);
    let image = ElfImage::read(&elf).unwrap_or_else(|e| panic!("{}: {e}", elf.display()));
    let report = analyze(&image, &StackOptions { arch, fpu, ..StackOptions::default() }).expect("decoder");
    let by_start: BTreeMap<u32, _> = report.functions.iter().map(|f| (f.start, f)).collect();
    let mut tally = Tally::default();
    for (addr, llvm) in stack_sizes(&image) {
        tally.entries += 1;
        if addr == 0 && !by_start.contains_key(&0) {
            tally.discarded += 1;
            continue;
        }
        let f =
            by_start.get(&addr).unwrap_or_else(|| panic!("{triple}: .stack_sizes entry 0x{addr:08x} is no function"));
        tally.compared += 1;
        match f.frame {
            Frame::Known { bytes } if bytes == llvm => tally.equal += 1,
            Frame::Known { bytes } if bytes == llvm + 8 && saves_lr_for_outlined_call(&image, f.start, f.end) => {
                tally.outliner_lr_save += 1
            }
            ref other => tally
                .mismatches
                .push(format!("{triple}: {} (0x{addr:08x}): LLVM {llvm} B, analyzer {other:?}", f.demangled)),
        }
    }
    tally
}

#[test]
fn frames_equal_llvm_stack_sizes() {
    // STACK_LLVM_OPT_LEVELS=3,s,z,1,0 widens the run to more opt-levels (one build each).
    let levels: Vec<String> = std::env::var("STACK_LLVM_OPT_LEVELS")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_else(|_| OPT_LEVELS.iter().map(|o| o.to_string()).collect());
    let mut total = Tally::default();
    for &(triple, arch, fpu) in TARGETS {
        for level in &levels {
            // The release profile's own level: no opt-level override (the build repo_firmware.rs reuses).
            let opt = (level != RELEASE_OPT_LEVEL).then_some(level.as_str());
            let t = compare(triple, opt, arch, fpu);
            eprintln!(
                "stack vs llvm .stack_sizes, kat {triple} opt-level {level}: {} entries, {} compared, {} equal, \
                 {} equal but for the outliner's LR save, {} discarded by the linker",
                t.entries, t.compared, t.equal, t.outliner_lr_save, t.discarded
            );
            assert!(t.compared >= 50, "{triple} opt-level {level}: too few functions compared: {}", t.compared);
            total.compared += t.compared;
            total.equal += t.equal;
            total.mismatches.extend(t.mismatches);
        }
    }
    eprintln!("total: {} compared, {} equal", total.compared, total.equal);
    for m in &total.mismatches {
        eprintln!("  MISMATCH {m}");
    }
    assert!(
        total.mismatches.is_empty(),
        "{} frames differ from LLVM's .stack_sizes (listed above)",
        total.mismatches.len()
    );
}
