//! What no analysis can settle, each with a paste-ready entry in one run: a call to code outside
//! the ELF (a boot-ROM routine at a fixed address: an unknown callee) and a frame set from a run-time value. Hand-written Thumb code,
//! assembled and linked with arm-none-eabi-as/ld; the printed entries, filled in, bound it.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use std::path::Path;

use mcubench_stack::annotations::AnnotationFile;
use mcubench_stack::{Bound, StackOptions, analyze};

/// The code (after the vector table of `_estack` and `Reset_Handler`: [`common::assemble`]).
const SOURCE: &str = r#"
function Reset_Handler
    bl caller
    bl vla
1:  b 1b
endfunction Reset_Handler

@ Calls a routine of the part's boot ROM at a fixed address (no code, no symbol in the ELF).
function caller
    push {r4, lr}
    ldr r3, =0x1fff0401
    blx r3
    pop {r4, pc}
    .ltorg
endfunction caller

@ SP from a run-time value (a VLA of r0 bytes).
function vla
    push {r7, lr}
    mov r7, sp
    sub sp, sp, r0
    mov sp, r7
    pop {r7, pc}
endfunction vla

@ The function the annotation names for the ROM routine: 16 B.
function helper_stand_in
    push {r4, r5, r6, lr}
    pop {r4, r5, r6, pc}
endfunction helper_stand_in
"#;

#[test]
fn unknown_callee_and_dynamic_frame_are_listed_with_entries_that_bound_them() {
    let image = common::assemble("unresolved", &["Reset_Handler"], SOURCE);
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    assert!(r.root("Reset_Handler").expect("reset").bound.bytes().is_none());
    let t = r.annotation_template();
    assert!(t.contains("indirect:\n") && t.contains("- { site: \"caller@1\", targets: [TARGET] }"), "{t}");
    assert!(t.contains("frames:\n") && t.contains("  \"vla\": BYTES"), "{t}");
    assert_eq!(r.unresolved.len(), 2, "{t}");
    // Filled in: the ROM routine uses what helper_stand_in uses, the VLA is at most 256 B.
    let filled = t.replace("[TARGET]", "[helper_stand_in]").replace("BYTES", "264");
    let file = AnnotationFile::parse(Path::new("fw.stack.yaml"), &filled).expect("parses");
    let (annotations, ignored) = file.resolve(&image).expect("resolves");
    assert!(ignored.is_empty(), "{ignored:?}");
    let r = analyze(&image, &StackOptions { annotations, ..StackOptions::default() }).expect("decoder");
    // Reset_Handler 0 + max(caller 8 + ROM routine 16, vla 264) = 264 B.
    match &r.root("Reset_Handler").expect("reset").bound {
        Bound::Bounded { bytes, .. } => assert_eq!(*bytes, 264),
        other => panic!("{other:?}\n{}", r.to_text(&[])),
    }
    assert!(r.unresolved.is_empty(), "{:?}", r.unresolved);
}
