//! Builds real ARM ELFs with arm-none-eabi-gcc for the tests. No mocks: if the compiler is
//! missing, the tests fail with a message saying how to install it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub const GCC: &str = "arm-none-eabi-gcc";

/// Legacy-mangled Rust name given to a C function through an asm label.
pub const RUST_LEGACY_FN: &str = "_ZN8firmware6crypto11mix_columns17h0123456789abcdefE";
/// v0-mangled Rust name given to a C object through an asm label.
pub const RUST_V0_OBJ: &str = "_RNvNtCs1234_8firmware6crypto4SBOX";

pub const LINKER_SCRIPT: &str = r#"
MEMORY
{
  FLASH (rx)  : ORIGIN = 0x00000000, LENGTH = 4M
  RAM   (rwx) : ORIGIN = 0x20000000, LENGTH = 4M
}
ENTRY(Reset_Handler)
_estack = ORIGIN(RAM) + LENGTH(RAM);
/* cortex-m-rt style stack symbols, to exercise stack_available */
_stack_start = ORIGIN(RAM) + LENGTH(RAM);

SECTIONS
{
  .isr_vector : { KEEP(*(.isr_vector)) } > FLASH
  .text : { *(.text .text.*) } > FLASH
  .rodata : ALIGN(4) { *(.rodata .rodata.*) } > FLASH
  .data : ALIGN(4)
  {
    _sdata = .;
    *(.data .data.*)
    . = ALIGN(4);
    _edata = .;
  } > RAM AT> FLASH
  _sidata = LOADADDR(.data);
  .bss (NOLOAD) : ALIGN(4)
  {
    _sbss = .;
    *(.bss .bss.* COMMON)
    . = ALIGN(4);
    _ebss = .;
  } > RAM
  .uninit (NOLOAD) : ALIGN(4) { *(.uninit .uninit.*) } > RAM
  ._user_heap_stack (NOLOAD) : ALIGN(8)
  {
    . = . + 0x400;  /* heap */
    . = . + 0x800;  /* stack */
  } > RAM
  _stack_end = .;
}
"#;

pub const PROGRAM: &str = r#"
#include <stdint.h>

extern uint32_t _estack, _sidata, _sdata, _edata, _sbss, _ebss;

void Reset_Handler(void);
int main(void);

void Default_Handler(void) { for (;;) { } }

__attribute__((section(".isr_vector"), used))
const void *const vector_table[16] = {
    &_estack, Reset_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, 0,
    0, 0, 0, Default_Handler, Default_Handler, 0, Default_Handler, Default_Handler,
};

/* 256 u32 of read-only data: 1024 bytes of .rodata */
#define R4(x) (x), (x) * 3u + 1u, (x) * 7u + 2u, (x) * 11u + 3u
#define R16(x) R4(x), R4((x) + 1), R4((x) + 2), R4((x) + 3)
#define R64(x) R16(x), R16((x) + 4), R16((x) + 8), R16((x) + 12)
const uint32_t table[256] = { R64(1), R64(17), R64(33), R64(49) };

/* 64 initialised u32: 256 bytes of .data, in flash (load image) and in RAM */
uint32_t counters[64] = { R16(5), R16(9), R16(13), R16(21) };

/* 1000 bytes of .bss */
uint8_t buf[1000];

/* 128 bytes never initialised */
__attribute__((section(".uninit"))) uint8_t noinit_log[128];

/* Rust-mangled names, as rustc would emit them */
const uint8_t sbox[64] __asm__("_RNvNtCs1234_8firmware6crypto4SBOX") = { 1, 2, 3, 4, 5 };
__attribute__((noinline)) uint32_t mix_columns(uint32_t x) __asm__("_ZN8firmware6crypto11mix_columns17h0123456789abcdefE");
__attribute__((noinline)) uint32_t mix_columns(uint32_t x) {
    for (int i = 0; i < 16; i++) {
        x = (x << 3) ^ (x >> 5) ^ sbox[(x + i) & 63];
    }
    return x;
}

int main(void) {
    volatile uint32_t acc = 0;
    for (uint32_t i = 0; i < sizeof buf; i++) {
        buf[i] = (uint8_t)(table[i & 255] + counters[i & 63]);
        acc += buf[i] + noinit_log[i & 127];
    }
    acc = mix_columns(acc);
    return (int)acc;
}

void Reset_Handler(void) {
    uint32_t *src = &_sidata, *dst = &_sdata;
    while (dst < &_edata) { *dst++ = *src++; }
    for (dst = &_sbss; dst < &_ebss; ) { *dst++ = 0; }
    main();
    for (;;) { }
}
"#;

/// A fresh scratch directory under the target dir.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcubench-elf-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Run arm-none-eabi-gcc with `args` in `dir`; panic with a clear message when it is missing or
/// fails.
pub fn gcc(dir: &Path, args: &[&str]) {
    let output = Command::new(GCC).args(args).current_dir(dir).output();
    let output = match output {
        Ok(o) => o,
        Err(e) => panic!(
            "{GCC} could not be run ({e}); these tests need a real ARM toolchain: install it \
             (Debian/Ubuntu: `apt-get install gcc-arm-none-eabi`, see ci/setup.sh)"
        ),
    };
    assert!(output.status.success(), "{GCC} {args:?} failed:\n{}", String::from_utf8_lossy(&output.stderr));
}

const CFLAGS: &[&str] = &[
    "-mcpu=cortex-m4",
    "-mthumb",
    "-O2",
    "-ffreestanding",
    "-fno-tree-loop-distribute-patterns",
    "-nostartfiles",
    "-nostdlib",
];

/// Compile `source` with `script` into `<dir>/<name>.elf`.
pub fn build(name: &str, source: &str, script: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("main.c"), source).unwrap();
    std::fs::write(dir.join("link.ld"), script).unwrap();
    let mut args = CFLAGS.to_vec();
    args.extend(["-T", "link.ld", "-o", "fw.elf", "main.c"]);
    gcc(&dir, &args);
    dir.join("fw.elf")
}

/// The test firmware, built once per test binary.
pub fn gcc_elf() -> &'static Path {
    static ELF: OnceLock<PathBuf> = OnceLock::new();
    ELF.get_or_init(|| build("fw", PROGRAM, LINKER_SCRIPT))
}

pub fn gcc_elf_bytes() -> Vec<u8> {
    std::fs::read(gcc_elf()).unwrap()
}
