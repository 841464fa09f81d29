//! Stack sums past 4 GiB are unbounded, never wrapped: frames from a hostile ELF (here: real
//! Thumb code whose `sub.w sp` frames add up past `u32::MAX`) must not wrap a bound to a small
//! number in release builds nor panic in debug builds. Each test assembles and links its ELF
//! with arm-none-eabi-as/ld and computes the true sum in 64 bits.

// Full test tier: needs QEMU and/or the Arm GCC toolchain (bash ci/setup.sh).
#![cfg(feature = "full")]

mod common;

use mcubench_stack::{Annotations, Arch, Bound, CallKind, Frame, StackOptions, StackReport, analyze};

/// Assembles and links `code` (see [`common::assemble`]) and analyses it.
fn analyze_asm(name: &str, handlers: &[&str], code: &str, options: &StackOptions) -> StackReport {
    analyze(&common::assemble(name, handlers, code), options).expect("decoder")
}

fn frame(r: &StackReport, name: &str) -> u32 {
    match &r.function(name).unwrap_or_else(|| panic!("no function {name}")).frame {
        Frame::Known { bytes } => *bytes,
        other => panic!("{name}: {other:?}"),
    }
}

/// The bound must be unbounded because of the overflow, not a (wrapped or saturated) number.
fn assert_past_4_gib(what: &str, bound: &Bound) {
    match bound {
        Bound::Unbounded { reason } => assert!(reason.contains("past 4 GiB"), "{what}: {reason}"),
        other => panic!("{what}: the true sum is past 4 GiB, but the bound is {other:?}"),
    }
}

#[test]
fn call_chain_past_4_gib_is_unbounded() {
    let code = r#"
    function Reset_Handler
    sub.w sp, sp, #0x7f000000
    bl middle
1:  b 1b
    endfunction Reset_Handler

    function middle
    push {r3, lr}
    sub.w sp, sp, #0x7f000000
    bl leaf
    add.w sp, sp, #0x7f000000
    pop {r3, pc}
    endfunction middle

    function leaf
    sub.w sp, sp, #0x02000000
    add.w sp, sp, #0x02000000
    bx lr
    endfunction leaf
"#;
    let r = analyze_asm("chain", &["Reset_Handler"], code, &StackOptions::default());
    let frames = [frame(&r, "Reset_Handler"), frame(&r, "middle"), frame(&r, "leaf")];
    assert_eq!(frames, [0x7f00_0000, 0x7f00_0008, 0x0200_0000]);
    // Each call is made with the caller's whole frame in use: the path needs the sum.
    let true_sum: u64 = frames.iter().map(|&f| u64::from(f)).sum();
    assert!(true_sum > u64::from(u32::MAX), "{true_sum:#x}");
    // Unchecked, `depth + callee` wraps to 8 B and the root keeps its own 2 GiB frame.
    assert_past_4_gib("reset", &r.root("Reset_Handler").expect("reset root").bound);
    assert_past_4_gib("msp", &r.msp);
    // The callee's own bound fits and stays a number.
    let middle = r.functions.iter().position(|f| f.name == "middle").expect("middle");
    assert_eq!(r.bound_of(middle).expect("bound").0, Bound::Exact { bytes: 0x8100_0008 });
}

#[test]
fn main_stack_past_4_gib_is_unbounded() {
    // The reset path and the handler fit in 32 bits; reset + handler + stacked frame does not.
    let code = r#"
    function Reset_Handler
    sub.w sp, sp, #0x7f000000
1:  b 1b
    endfunction Reset_Handler

    function NMI_Handler
    push {r3, lr}
    sub.w sp, sp, #0x7f000000
    bl leaf
    add.w sp, sp, #0x7f000000
    pop {r3, pc}
    endfunction NMI_Handler

    function leaf
    sub.w sp, sp, #0x01000000
    sub.w sp, sp, #0x00ff0000
    sub.w sp, sp, #0x0000ff00
    sub sp, #0xe4
    add sp, #0xe4
    add.w sp, sp, #0x0000ff00
    add.w sp, sp, #0x00ff0000
    add.w sp, sp, #0x01000000
    bx lr
    endfunction leaf
"#;
    let options = StackOptions { arch: Arch::V7M, fpu: false, ..StackOptions::default() };
    let r = analyze_asm("msp", &["Reset_Handler", "NMI_Handler"], code, &options);
    let reset = r.root("Reset_Handler").expect("reset root").bound.bytes().expect("reset fits");
    let nmi = r.root("NMI_Handler").expect("NMI root").bound.bytes().expect("NMI fits");
    assert_eq!((reset, nmi), (0x7f00_0000, 0x80ff_ffec));
    let stacked = mcubench_stack::exception_frame(Arch::V7M, false, false);
    let true_sum = u64::from(reset) + u64::from(nmi) + u64::from(stacked);
    // 2^32 + 16: unchecked, the main stack wraps to a 16-byte bound.
    assert_eq!(true_sum, (1 << 32) + 16);
    assert_past_4_gib("msp", &r.msp);
}

#[test]
fn recursion_depth_times_frame_past_4_gib_is_unbounded() {
    let code = r#"
    function Reset_Handler
    push {r3, lr}
    movs r0, #3
    bl rec
1:  b 1b
    endfunction Reset_Handler

    function rec
    push {r4, lr}
    sub.w sp, sp, #0x40000000
    cbz r0, 2f
    subs r0, #1
    bl rec
2:  add.w sp, sp, #0x40000000
    pop {r4, pc}
    endfunction rec
"#;
    let annotations = Annotations { recursion: [("rec".to_string(), 4)].into(), ..Annotations::default() };
    let r =
        analyze_asm("recursion", &["Reset_Handler"], code, &StackOptions { annotations, ..StackOptions::default() });
    let rec = r.function("rec").expect("rec");
    assert!(rec.calls.iter().any(|c| c.kind == CallKind::Call { target: rec.start } && c.depth == 0x4000_0008));
    // 8 B of Reset_Handler + 4 activations × (0x40000000 + 8 B).
    let true_sum = 8 + 4 * u64::from(frame(&r, "rec"));
    assert!(true_sum > u64::from(u32::MAX), "{true_sum:#x}");
    // Unchecked, rec saturates at u32::MAX and Reset_Handler's `8 + u32::MAX` wraps to an 8 B bound.
    assert_past_4_gib("reset", &r.root("Reset_Handler").expect("reset root").bound);
    let i = r.functions.iter().position(|f| f.name == "rec").expect("rec");
    assert_past_4_gib("rec", &r.bound_of(i).expect("bound").0);
}

#[test]
fn sp_at_2_gib_below_entry_counts_the_whole_frame() {
    // SP reaches entry - 2^31 (i32::MIN as an offset): negating it overflowed, halving the frame
    // and putting the call at depth 0.
    let code = r#"
    function Reset_Handler
    sub.w sp, sp, #0x40000000
    sub.w sp, sp, #0x40000000
    bl leaf
1:  b 1b
    endfunction Reset_Handler

    function leaf
    push {r3, lr}
    pop {r3, pc}
    endfunction leaf
"#;
    let r = analyze_asm("sp-2gib", &["Reset_Handler"], code, &StackOptions::default());
    assert_eq!(frame(&r, "Reset_Handler"), 0x8000_0000);
    let reset = r.function("Reset_Handler").expect("reset");
    assert_eq!(reset.calls.len(), 1, "{:?}", reset.calls);
    assert_eq!(reset.calls[0].depth, 0x8000_0000);
    assert_eq!(r.root("Reset_Handler").expect("reset root").bound, Bound::Exact { bytes: 0x8000_0008 });
}
