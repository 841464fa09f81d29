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
