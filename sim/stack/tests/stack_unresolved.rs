//! What no analysis can settle, each with a paste-ready entry in one run: a call to code with no
//! symbol (an unknown callee) and a frame set from a run-time value. Hand-written Thumb code,
//! assembled and linked with arm-none-eabi-as/ld; the printed entries, filled in, bound it.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::Path;

use mcubench_elf::ElfImage;
use mcubench_stack::annotations::AnnotationFile;
use mcubench_stack::{Bound, StackOptions, analyze};

const SOURCE: &str = r#"
    .syntax unified
    .cpu cortex-m4
    .thumb
    .section .isr_vector, "a", %progbits
    .word _estack
    .word Reset_Handler
    .text
    .macro function name
    .thumb_func
    .global \name
    .type \name, %function
\name:
    .endm
    .macro endfunction name
    .size \name, . - \name
    .endm

function Reset_Handler
    bl caller
    bl vla
1:  b 1b
endfunction Reset_Handler

@ Calls a helper that has no symbol of its own (after the end of `caller`).
function caller
    push {r4, lr}
    bl .Lhelper_code
    pop {r4, pc}
endfunction caller
.Lhelper_code:
    push {r4, r5, r6, lr}
    pop {r4, r5, r6, pc}

@ SP from a run-time value (a VLA of r0 bytes).
function vla
    push {r7, lr}
    mov r7, sp
    sub sp, sp, r0
    mov sp, r7
    pop {r7, pc}
endfunction vla

@ The function the annotation names for the helper: the same 16 B.
function helper_stand_in
    push {r4, r5, r6, lr}
    pop {r4, r5, r6, pc}
endfunction helper_stand_in
"#;

const SCRIPT: &str = r#"
MEMORY { FLASH (rx) : ORIGIN = 0, LENGTH = 64K
         RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 64K }
_estack = ORIGIN(RAM) + LENGTH(RAM);
ENTRY(Reset_Handler)
SECTIONS { .isr_vector : { KEEP(*(.isr_vector)) } > FLASH
           .text : { *(.text*) } > FLASH }
"#;

#[test]
fn unknown_callee_and_dynamic_frame_are_listed_with_entries_that_bound_them() {
    let dir = common::scratch("unresolved");
    std::fs::write(dir.join("fw.s"), SOURCE).unwrap();
    std::fs::write(dir.join("link.ld"), SCRIPT).unwrap();
    common::run("arm-none-eabi-as", &["-o", "fw.o", "fw.s"], &dir);
    common::run("arm-none-eabi-ld", &["-T", "link.ld", "-o", "fw.elf", "fw.o"], &dir);
    let image = ElfImage::read(&dir.join("fw.elf")).expect("parses");
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    assert!(r.root("Reset_Handler").expect("reset").bound.bytes().is_none());
    let t = r.annotation_template();
    assert!(t.contains("indirect:\n") && t.contains("- { site: \"caller+0x2\", targets: [TARGET] }"), "{t}");
    assert!(t.contains("frames:\n") && t.contains("  \"vla\": BYTES"), "{t}");
    assert_eq!(r.unresolved.len(), 2, "{t}");
    // Filled in: the helper uses what helper_stand_in uses, the VLA is at most 256 B.
    let filled = t.replace("[TARGET]", "[helper_stand_in]").replace("BYTES", "264");
    let file = AnnotationFile::parse(Path::new("fw.stack.yaml"), &filled).expect("parses");
    let (annotations, ignored) = file.resolve(&image).expect("resolves");
    assert!(ignored.is_empty(), "{ignored:?}");
    let r = analyze(&image, &StackOptions { annotations, ..StackOptions::default() }).expect("decoder");
    // Reset_Handler 0 + max(caller 8 + helper 16, vla 264) = 264 B.
    match &r.root("Reset_Handler").expect("reset").bound {
        Bound::Bounded { bytes, .. } => assert_eq!(*bytes, 264),
        other => panic!("{other:?}\n{}", r.to_text(&[])),
    }
    assert!(r.unresolved.is_empty(), "{:?}", r.unresolved);
}
