//! Builds real ARM ELFs with the GNU Arm toolchain for the tests. No mocks: if a tool is missing,
//! the tests fail with a message saying how to install it.

use std::path::{Path, PathBuf};
use std::process::Command;

use mcubench_elf::ElfImage;

/// A fresh scratch directory under the target dir.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcubench-stack-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Runs `tool` (arm-none-eabi-gcc, -as, -ld) with `args` in `dir`; panics with its stderr when
/// it fails, or with how to install it when it is missing.
pub fn run(tool: &str, args: &[&str], dir: &Path) {
    let output = Command::new(tool).args(args).current_dir(dir).output().unwrap_or_else(|e| {
        panic!("{tool} could not be run ({e}): install the GNU Arm toolchain (apt-get install gcc-arm-none-eabi, see ci/setup.sh)")
    });
    assert!(output.status.success(), "{tool} {args:?} failed:\n{}", String::from_utf8_lossy(&output.stderr));
}

/// The assembler prelude of the hand-written test objects: Thumb-2 for a Cortex-M4 and the
/// `function NAME` / `endfunction NAME` macros (a global, typed, sized function symbol).
const ASM_HEADER: &str = r#"
    .syntax unified
    .cpu cortex-m4
    .thumb
    .macro function name
    .thumb_func
    .global \name
    .type \name, %function
\name:
    .endm
    .macro endfunction name
    .size \name, . - \name
    .endm
"#;

/// Flash at 0 (the vector table first), RAM at 0x20000000, `_estack` at the top of RAM.
const LINK_SCRIPT: &str = r#"
MEMORY { FLASH (rx) : ORIGIN = 0, LENGTH = 64K
         RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 64K }
_estack = ORIGIN(RAM) + LENGTH(RAM);
ENTRY(Reset_Handler)
SECTIONS { .isr_vector : { KEEP(*(.isr_vector)) } > FLASH
           .text : { *(.text*) } > FLASH }
"#;

/// Assembles `code` (after [`ASM_HEADER`], in `.text`) behind a vector table of `_estack` and
/// `handlers` (reset first), links it at address 0 with arm-none-eabi-as/ld in a scratch
/// directory named `name`, and reads the ELF.
#[allow(dead_code)] // each test binary compiles this module; not all of them assemble
pub fn assemble(name: &str, handlers: &[&str], code: &str) -> ElfImage {
    let dir = scratch(name);
    let vectors: String = handlers.iter().map(|h| format!("    .word {h}\n")).collect();
    let source = format!(
        "{ASM_HEADER}\n    .section .isr_vector, \"a\", %progbits\n    .word _estack\n{vectors}\n    .text\n{code}"
    );
    std::fs::write(dir.join("fw.s"), source).unwrap();
    std::fs::write(dir.join("link.ld"), LINK_SCRIPT).unwrap();
    run("arm-none-eabi-as", &["-o", "fw.o", "fw.s"], &dir);
    run("arm-none-eabi-ld", &["-T", "link.ld", "-o", "fw.elf", "fw.o"], &dir);
    ElfImage::read(&dir.join("fw.elf")).expect("parses")
}

/// Runs `elf` under QEMU (`machine`: `-machine`/`-cpu` arguments) with semihosting until it
/// exits; asserts it exited 0 and returns its output (stdout and stderr: where semihosting's
/// writes land depends on QEMU's chardev).
#[allow(dead_code)] // only the C-library corpus tests run firmware
pub fn run_semihosting(elf: &Path, machine: &[&str]) -> String {
    let out = Command::new("timeout")
        .args(["60", "qemu-system-arm"])
        .args(machine)
        .args(["-nographic", "-no-reboot", "-semihosting", "-kernel"])
        .arg(elf)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("qemu-system-arm");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{} exited with {:?}: {text}", elf.display(), out.status);
    text
}

/// The painted stack high-water mark a corpus program prints (`STACK-HWM <bytes>`).
#[allow(dead_code)]
pub fn stack_hwm(elf: &Path, text: &str) -> u32 {
    text.lines()
        .find_map(|l| l.strip_prefix("STACK-HWM "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no STACK-HWM line from {}: {text}", elf.display()))
}

/// A corpus ELF's reset and MSP bounds, asserting what "bounded with no annotations" means: both
/// finite, nothing unresolved, and the C library's `pack` applied with no notes.
#[allow(dead_code)]
pub fn bounded_by_pack(name: &str, r: &mcubench_stack::StackReport, pack: &str) -> (u32, u32) {
    let reset = r.roots.iter().find(|x| x.role == "reset").expect("reset root");
    let bound =
        reset.bound.bytes().unwrap_or_else(|| panic!("{name}: reset unbounded: {:?}\n{}", reset.bound, r.to_text(&[])));
    let msp = r.msp.bytes().unwrap_or_else(|| panic!("{name}: MSP unbounded: {:?}", r.msp));
    assert!(r.unresolved.is_empty(), "{name}: {:?}", r.unresolved);
    let applied = r.packs.iter().find(|p| p.pack == pack).unwrap_or_else(|| panic!("{name}: {:?}", r.packs));
    assert!(applied.applied > 0 && applied.notes.is_empty(), "{name}: {applied:?}");
    (bound, msp)
}

/// Soundness against the painted mark, and the row the corpus tests print.
#[allow(dead_code)]
pub fn sound_row(name: &str, bound: u32, msp: u32, hwm: u32) -> String {
    assert!(bound >= hwm && msp >= bound, "{name}: bound {bound} B, MSP {msp} B, measured {hwm} B");
    format!(
        "{name:<24} reset {bound:>5} B  MSP {msp:>5} B  measured {hwm:>4} B  bound/measured {:.2}",
        f64::from(bound) / f64::from(hwm)
    )
}
