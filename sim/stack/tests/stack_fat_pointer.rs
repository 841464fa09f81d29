//! Trait-object calls as rustc emits them around `Result<_, signature::Error>` drops and
//! `dyn` method calls, each reproduced in a small real ELF (the shapes of the secure-boot
//! firmware's ECDSA and hybrid verify paths):
//! - the fat pointer's two words loaded separately, next to a third word of the same struct,
//!   one of them conditionally in an IT block whose last instruction sets the flags for the
//!   branch after it (`itt ne; ldrne r5, [r4, #4]; cmpne r5, #0; bne`): still a call through
//!   the vtable's slot, with the receiver the word below the vtable word;
//! - a call through slot 0 (`drop_in_place`) when no vtable has drop glue: it reaches only the
//!   functions in data outside vtables (here none);
//! - a function whose address is only loaded from a literal pool (`ldr r1, =f`, as code that
//!   builds `fmt::Arguments` does) is a constant the code builds, not a word of a table a
//!   vtable call reads; the same address also in a data table is.
//!
//! The bounds of the assembly are derived by hand in the comments.
#![cfg(feature = "full")]

mod common;

use mcubench_stack::{Bound, StackOptions, StackReport, analyze};

fn reset(r: &StackReport) -> &Bound {
    &r.roots.iter().find(|x| x.role == "reset").expect("reset root").bound
}

/// `caller(&S)` with `S { tag @0, data @4, vtable @8 }` calls slot `SLOT` of the vtable with
/// the data word as receiver, at 16 B of its own frame. A `core` function makes the ELF a Rust
/// one (trait-object calls are recognised only there). `method_a` (40 B) is slot 3 of the one
/// vtable (no drop glue); `heavy` (400 B) is address-taken through `builder`'s literal pool.
fn program(slot: u32, extra_data: &str) -> String {
    format!(
        r#"
function Reset_Handler
    bl caller            @ depth 0
    bl builder
1:  b 1b
endfunction Reset_Handler

function caller
    push {{r4, r5, r6, lr}}
    mov r4, r0
    ldr r0, [r4, #0]     @ the tag: a third word next to the pair
    cmp r0, #0
    itt ne
    ldrne r5, [r4, #4]   @ data word, only when the tag is set
    cmpne r5, #0
    bne 2f
    pop {{r4, r5, r6, pc}}
2:  ldr r6, [r4, #8]     @ vtable word
    ldr r1, [r6, #{slot}]
    cmp r1, #0
    itt ne
    movne r0, r5
    blxne r1             @ depth 16
    pop {{r4, r5, r6, pc}}
endfunction caller

function builder
    push {{r4, lr}}
    ldr r4, =heavy       @ the address loaded and stored at run time (an fmt::Argument's
    str r4, [sp, #0]     @ formatter): address-taken, but in no table in the image
    pop {{r4, pc}}
    .ltorg
endfunction builder

function method_a
    push {{r4-r7, lr}}
    sub sp, #20          @ frame 40
    add sp, #20
    pop {{r4-r7, pc}}
endfunction method_a

function heavy
    push {{r4, lr}}
    sub sp, #392         @ frame 400
    add sp, #392
    pop {{r4, pc}}
endfunction heavy

function _ZN4core3fmt5write17h0123456789abcdefE
    bx lr
endfunction _ZN4core3fmt5write17h0123456789abcdefE

    .section .rodata
    .align 2
vtable_a: .word 0, 4, 4, method_a
{extra_data}
"#
    )
}

#[test]
fn separately_and_conditionally_loaded_fat_pointer_calls_its_vtable_slot() {
    let image = common::assemble("fat-split", &["Reset_Handler"], &program(12, ""));
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    let text = r.to_text(&[]);
    // caller 16 + method_a 40 = 56 B; builder 8 B. `heavy` is not a slot-3 target.
    assert_eq!(reset(&r).bytes(), Some(56), "{text}");
}

#[test]
fn drop_slot_without_drop_glue_reaches_no_vtable_function() {
    let image = common::assemble("fat-drop", &["Reset_Handler"], &program(0, ""));
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    let text = r.to_text(&[]);
    // No vtable has a drop function and no function is in data outside vtables: the call
    // reaches nothing, caller is 16 B.
    assert_eq!(reset(&r).bytes(), Some(16), "{text}");
}

#[test]
fn a_function_also_in_a_data_table_stays_a_possible_slot_target() {
    // `heavy` in a data table the vtable scan does not take for a vtable (a hand-made table
    // could be reached through a (receiver, table) pair): slot 3 may reach it.
    let table = "    .section .data\n    .align 2\nops: .word heavy\n";
    let image = common::assemble("fat-data-table", &["Reset_Handler"], &program(12, table));
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    let text = r.to_text(&[]);
    // caller 16 + heavy 400 = 416 B.
    assert_eq!(reset(&r).bytes(), Some(416), "{text}");
}
