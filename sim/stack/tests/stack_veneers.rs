//! Linker veneers and `-mlong-calls` calls are followed to their target: a GCC-linked far call
//! (`movw ip; movt ip; bx ip` veneer, which ld emits for `-mpure-code` sections) and a
//! `long_call` (`movw r3; movt r3; blx r3`) count as a tail call and a direct call.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::PathBuf;

use mcubench_elf::ElfImage;
use mcubench_stack::{Bound, CallKind, Frame, StackOptions, analyze};

const SOURCE: &str = r#"
typedef void (*vector)(void);
extern unsigned _estack;
void Reset_Handler(void);
__attribute__((section(".isr_vector"), used)) const vector vectors[2] = { (vector)&_estack, Reset_Handler };

/* 0x10000000 is beyond the ±16 MiB reach of BL from flash at 0: the linker adds a veneer. */
__attribute__((section(".far"), noinline)) int far_leaf(int x)
{
    volatile int buf[10];
    for (int i = 0; i < 10; i++) buf[i] = x + i;
    return buf[3] + buf[7];
}

__attribute__((noinline)) int near_caller(int x) { return far_leaf(x) + 1; }

/* A long call: the address is built in a register (movw/movt with -mpure-code). */
__attribute__((long_call)) int long_target(int x);
__attribute__((section(".far.long"), noinline)) int long_target(int x)
{
    volatile int b[16];
    b[0] = x;
    return b[0] * 3;
}
__attribute__((noinline)) int long_caller(int x) { return long_target(x) + 2; }

__attribute__((noreturn)) void Reset_Handler(void)
{
    volatile int r = near_caller(1) + long_caller(2);
    (void)r;
    for (;;) { }
}
"#;

const SCRIPT: &str = r#"
MEMORY
{
  FLASH (rx)  : ORIGIN = 0x00000000, LENGTH = 1M
  FAR   (rx)  : ORIGIN = 0x10000000, LENGTH = 1M
  RAM   (rwx) : ORIGIN = 0x20000000, LENGTH = 64K
}
ENTRY(Reset_Handler)
_estack = ORIGIN(RAM) + LENGTH(RAM);
SECTIONS
{
  .isr_vector : { KEEP(*(.isr_vector)) } > FLASH
  .text : { *(.text .text.*) } > FLASH
  .far : { *(.far .far.*) } > FAR
  .rodata : ALIGN(4) { *(.rodata .rodata.*) } > FLASH
}
"#;

/// Compiles and links SOURCE with SCRIPT into a fresh directory under the target dir.
fn build() -> PathBuf {
    let dir = common::scratch("veneers");
    std::fs::write(dir.join("main.c"), SOURCE).unwrap();
    std::fs::write(dir.join("link.ld"), SCRIPT).unwrap();
    let flags = ["-mcpu=cortex-m4", "-mthumb", "-O2", "-ffreestanding", "-nostartfiles", "-nostdlib", "-mpure-code"];
    let args: Vec<&str> = flags.iter().copied().chain(["-T", "link.ld", "-o", "fw.elf", "main.c"]).collect();
    common::run("arm-none-eabi-gcc", &args, &dir);
    dir.join("fw.elf")
}

#[test]
fn movw_movt_veneer_and_long_call_reach_their_targets() {
    let image = ElfImage::read(&build()).expect("parses");
    let r = analyze(&image, &StackOptions { fpu: false, ..StackOptions::default() }).expect("decoder");
    let far_leaf = r.function("far_leaf").expect("far_leaf");
    let long_target = r.function("long_target").expect("long_target");
    assert_eq!(far_leaf.frame, Frame::Known { bytes: 40 });
    assert_eq!(long_target.frame, Frame::Known { bytes: 64 });

    // The veneer the linker placed for the far call: movw ip / movt ip / bx ip.
    let veneer = r.function("__far_leaf_veneer").expect("ld's veneer symbol");
    let bytes = image.bytes_at(u64::from(veneer.start), 10).expect("veneer bytes");
    assert_eq!(&bytes[8..10], &[0x60, 0x47], "bx ip: {bytes:02x?}");
    assert_eq!(veneer.frame, Frame::Known { bytes: 0 });
    assert_eq!(veneer.calls.len(), 1, "{:?}", veneer.calls);
    assert_eq!(veneer.calls[0].kind, CallKind::Tail { target: far_leaf.start });

    // The long call is a direct call with the caller's frame (push {r3, lr}) in use.
    let long_caller = r.function("long_caller").expect("long_caller");
    assert!(
        long_caller.calls.iter().any(|c| c.kind == CallKind::Call { target: long_target.start } && c.depth == 8),
        "{:?}",
        long_caller.calls
    );
    assert!(r.unresolved.is_empty(), "{:?}", r.unresolved);

    // Reset: push {lr} + sub sp, #12 = 16, then long_caller 8 + long_target 64 = 88 (deeper
    // than near_caller 8 + veneer 0 + far_leaf 40).
    let reset = r.root("Reset_Handler").expect("reset root");
    assert_eq!(reset.bound, Bound::Exact { bytes: 88 });
    assert_eq!(reset.path, ["Reset_Handler", "long_caller", "long_target"]);
    let near = r.functions.iter().position(|f| f.name == "near_caller").expect("near_caller");
    let (b, path) = r.bound_of(near).expect("bound");
    assert_eq!(b.bytes(), Some(48));
    let names: Vec<&str> = path.iter().map(|&i| r.functions[i].name.as_str()).collect();
    assert_eq!(names, ["near_caller", "__far_leaf_veneer", "far_leaf"]);
}
