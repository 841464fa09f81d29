//! Start-up code and stdio hooks that made whole-program bounds of real GCC + newlib firmware
//! (pqm4's) falsely unbounded, each reproduced in a small real ELF:
//! - a CMSIS-style reset handler that loads `SystemInit`'s and `_start`'s addresses from its
//!   literal pool and branches through them (`ldr r0, =f; blx r0` / `bx r0`): the branch is a
//!   direct call, the literal no address-taken function; a literal whose value is used any
//!   other way (here: read by the function it jumps to) stays address-taken;
//! - a crt0 that sets SP as its first act, whose address is taken: a call of it from code it
//!   reaches restarts the stack, it is no recursion;
//! - GCC's stack save/restore around a block-scoped VLA (`str sp, [r7, #k]` ... `ldr sp,
//!   [r7, #k]`, mayo's `P1P1t_times_O`): SP is what was saved, not a run-time value;
//! - fprintf/fwrite/fputs on a FILE: newlib's FILE-slot calls (`__sfvwrite_r`, `__sflush_r`,
//!   ...) reach the stream hooks the newlib pack names, not every address-taken function.
//!
//! The bounds of the assembly are derived by hand in the comments.
#![cfg(feature = "full")]

mod common;

use mcubench_elf::ElfImage;
use mcubench_stack::{Bound, StackOptions, StackReport, analyze};

fn reset(r: &StackReport) -> &Bound {
    &r.roots.iter().find(|x| x.role == "reset").expect("reset root").bound
}

/// `main` calls through the writable hook `hook` (initially `work`: 20 B pushed + 100 B),
/// with 24 B of its own frame live; `start` calls `main` with 8 B live.
const PROGRAM: &str = r#"
    .text
function SystemInit
    movs r1, #1          @ writes r1 only: never reads the r0 it is called with
    bx lr
endfunction SystemInit

function main
    push {r4, lr}
    sub sp, #16
    ldr r3, =hook
    ldr r3, [r3]
    blx r3               @ depth 24
    add sp, #16
    pop {r4, pc}
    .ltorg
endfunction main

function work
    push {r4-r7, lr}
    sub sp, #100         @ frame 120
    add sp, #100
    pop {r4-r7, pc}
endfunction work

    .data
    .align 2
hook: .word work
"#;

/// The reset handler of CMSIS's GCC start-up file (and pqm4's mps2 one).
const RESET: &str = r#"
function Reset_Handler
    ldr r0, =SystemInit
    blx r0
    ldr r0, =start
    bx r0
    .ltorg
endfunction Reset_Handler
"#;

#[test]
fn reset_handler_literal_branch_is_a_call_not_an_address_taken_function() {
    // start reads nothing it is entered with: its address is only branched to.
    let start = r#"
function start
    push {r4, lr}
    movs r0, #0          @ argc: r0 no longer holds start's address
    bl main              @ depth 8
    pop {r4, pc}
endfunction start
"#;
    let image = common::assemble("literal-branch", &["Reset_Handler"], &format!("{RESET}{start}{PROGRAM}"));
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    let text = r.to_text(&[]);
    // start 8 + main 24 + work 120 = 152 B.
    assert_eq!(reset(&r).bytes(), Some(152), "{text}");
    assert_eq!(r.address_taken, vec!["work".to_string()], "{text}");

    // start reads r0 (the `bx r0` hands it start's own address): the address may be kept and
    // called later, so start stays address-taken and main's hook call may re-enter it.
    let start_reads_r0 = r#"
function start
    push {r4, lr}
    mov r4, r0
    bl main
    pop {r4, pc}
endfunction start
"#;
    let image = common::assemble("literal-escapes", &["Reset_Handler"], &format!("{RESET}{start_reads_r0}{PROGRAM}"));
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    assert!(r.address_taken.contains(&"start".to_string()), "{:?}", r.address_taken);
    match reset(&r) {
        Bound::Unbounded { reason } => assert!(reason.contains("recursion"), "{reason}"),
        b => panic!("start re-entered through main's hook must be recursion: {b:?}"),
    }
}

#[test]
fn call_of_a_stack_resetting_crt0_from_its_own_callees_restarts_the_stack() {
    // crt0 sets SP to the top first; its address is also in data (a restart vector), so main's
    // hook call may reach it: that call starts the stack over, no recursion.
    let code = r#"
function Reset_Handler
    b start
endfunction Reset_Handler

function start
    ldr r3, =_estack
    mov sp, r3
    bl main              @ depth 0
1:  b 1b
    .ltorg
endfunction start

    .data
    .align 2
restart: .word start
"#;
    let image = common::assemble("stack-restart", &["Reset_Handler"], &format!("{code}{PROGRAM}"));
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    let text = r.to_text(&[]);
    assert!(r.address_taken.contains(&"start".to_string()), "{:?}", r.address_taken);
    // main 24 + work 120 = 144 B (SystemInit is not called here).
    assert_eq!(reset(&r).bytes(), Some(144), "{text}");
    assert!(r.msp.bytes().is_some(), "{text}");
}

#[test]
fn stdio_file_hooks_reach_the_stream_functions_the_newlib_pack_names() {
    let dir = common::scratch("stdio-hooks");
    let src = r#"
#include <stdio.h>
#include <string.h>
static int out(const char *s) { return fputs(s, stdout); }
int (*volatile sink)(const char *) = out;
int main(void) {
    char line[64];
    static const char msg[] = "block\n";
    fprintf(stderr, "x=%d\n", 42);
    fwrite(msg, 1, sizeof msg - 1, stdout);
    snprintf(line, sizeof line, "%s", "hello\n");
    sink(line);
    fflush(stdout);
    return 0;
}
"#;
    std::fs::write(dir.join("main.c"), src).unwrap();
    common::run(
        "arm-none-eabi-gcc",
        &["-mcpu=cortex-m4", "-mthumb", "-O2", "--specs=nosys.specs", "-o", "fw.elf", "main.c"],
        &dir,
    );
    let image = ElfImage::read(&dir.join("fw.elf")).expect("ELF parses");
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    let text = r.to_text(&["_mainCRTStartup"]);
    // No vector table at a load address here (nosys.specs): the program from crt0 on.
    let crt0 = r.functions.iter().position(|f| f.name == "_mainCRTStartup").expect("_mainCRTStartup");
    let Some((Bound::Bounded { assumptions, .. }, _)) = r.bound_of(crt0) else {
        panic!("_mainCRTStartup not bounded:\n{text}")
    };
    // Every FILE-slot call of the stdio core that the reset path reaches is resolved by the pack.
    for site in ["__sfvwrite_r", "__sflush_r"] {
        let by_pack: Vec<&String> = assumptions
            .iter()
            .filter(|a| a.contains(&format!("targets of {site}+")) && a.contains("FILE hook"))
            .collect();
        assert!(!by_pack.is_empty(), "{site}'s hook calls not resolved by the pack:\n{text}");
        let wide: Vec<&String> = assumptions
            .iter()
            .filter(|a| a.contains(&format!("call at {site}+")) && a.contains("address-taken"))
            .collect();
        assert!(wide.is_empty(), "{site} still reaches the address-taken set: {wide:?}");
    }
}

#[test]
fn sp_saved_in_the_frame_and_restored_is_known() {
    let vla = |between: &str| {
        format!(
            r#"
function Reset_Handler
    bl vla               @ depth 0
1:  b 1b
endfunction Reset_Handler

function vla
    push {{r7, lr}}
    sub sp, #16
    add r7, sp, #0
    str sp, [r7, #12]    @ save SP (entry-24)
    sub sp, #1024        @ the block's array
    mov r0, sp
    {between}
    bl leaf              @ depth 24 + 1024 = 1048
    ldr sp, [r7, #12]    @ restore: entry-24
    add sp, #16
    pop {{r7, pc}}
endfunction vla

function leaf
    push {{r4, lr}}      @ frame 8
    pop {{r4, pc}}
endfunction leaf
"#
        )
    };
    let image = common::assemble("sp-save", &["Reset_Handler"], &vla("nop"));
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    // 1048 + 8 = 1056 B.
    assert_eq!(reset(&r).bytes(), Some(1056), "{}", r.to_text(&[]));
    // The slot is overwritten before the restore: SP is then a run-time value.
    let image = common::assemble("sp-save-clobbered", &["Reset_Handler"], &vla("str r0, [r7, #12]"));
    let r = analyze(&image, &StackOptions::default()).expect("decoder");
    match reset(&r) {
        Bound::Unbounded { reason } => assert!(reason.contains("run-time value"), "{reason}"),
        b => panic!("a clobbered save slot must not be trusted: {b:?}"),
    }
}
