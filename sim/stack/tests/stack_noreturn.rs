//! Calls to functions known not to return (`abort`, `__stack_chk_fail`, panics:
//! `mcubench_stack::noreturn`) end the caller's path: hand-written Thumb code where the block
//! after such a call is also the target of a path with another SP (divergent if the call were
//! taken to return), assembled and linked with arm-none-eabi-as/ld.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use mcubench_stack::{Bound, Frame, StackOptions, analyze, noreturn};

/// The code (after the vector table of `_estack` and `Reset_Handler`: [`common::assemble`]).
const SOURCE: &str = r#"
function Reset_Handler
    movs r0, #1
    bl check
    bl check_rust
1:  b 1b
endfunction Reset_Handler

@ check(x): x == 0 returns at once; else 16 B of frame and, on the cold path, abort().
@ The return below the call is reached with SP = entry only: if abort returned, the two
@ paths would join there with SP entry-16 and entry+0.
function check
    cmp r0, #0
    beq 2f
    push {r4, lr}
    sub sp, #8
    bl abort
2:  bx lr
endfunction check

@ The same with a Rust panic (demangled core::panicking::panic_fmt).
function check_rust
    cmp r0, #0
    beq 2f
    push {r4, r5, r6, lr}
    bl _ZN4core9panicking9panic_fmt17h0123456789abcdefE
2:  bx lr
endfunction check_rust

@ abort: 8 B, loops.
function abort
    push {r3, lr}
3:  b 3b
endfunction abort

function _ZN4core9panicking9panic_fmt17h0123456789abcdefE
    push {r4, r5, r6, r7, r8, lr}
4:  b 4b
endfunction _ZN4core9panicking9panic_fmt17h0123456789abcdefE
"#;

#[test]
fn a_call_to_a_no_return_function_ends_the_path() {
    let image = common::assemble("noreturn", &["Reset_Handler"], SOURCE);
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    let frame = |n: &str| r.function(n).unwrap_or_else(|| panic!("{n}")).frame.clone();
    // Hand-derived: check pushes 8 B and subtracts 8 B; check_rust pushes 16 B.
    assert_eq!(frame("check"), Frame::Known { bytes: 16 });
    assert_eq!(frame("check_rust"), Frame::Known { bytes: 16 });
    // The callees' stacks still count: check 16 + abort 8; check_rust 16 + panic_fmt 24.
    // Reset_Handler calls both at depth 0: max(24, 40) = 40 B.
    assert_eq!(r.root("Reset_Handler").expect("reset").bound, Bound::Exact { bytes: 40 });
    assert!(noreturn::reason("abort", "abort").is_some());
}
