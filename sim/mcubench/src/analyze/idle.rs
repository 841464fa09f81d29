//! Idle loops, found in the code without running it: where firmware for a board ends in
//! `while (1) { __WFI(); }`, so that `verdict.exit: loop` can end the run there
//! ([`crate::exec::plugin::scanned`], the plugin's `idle=`) and a timeout can say so.

use mcubench_thumb::{Flow, Insn};

/// The idle loops of the decoded `functions` ([`super::decoded_functions`]; `while (1) { __WFI(); }`,
/// `while (1) { __DSB(); __WFI(); }`): the addresses of the `wfi`/`wfe` in each loop made of
/// nothing but them, `nop` and barriers (`dsb`/`dmb`/`isb`, which change no register or memory)
/// and an unconditional branch back to its start (GCC may unroll it: `wfi; wfi; b`), in address
/// order. With `verdict.exit: loop` the run ends at the first of them that runs in thread mode
/// (`idle=`), before the core sleeps, as it ends at a branch to itself: QEMU's core would sleep
/// until an interrupt that may never come.
pub fn idle_loops(functions: &[(String, Vec<Insn>)]) -> Vec<u32> {
    let sleeps = |i: &Insn| matches!(i.mnemonic.as_str(), "wfi" | "wfi.w" | "wfe" | "wfe.w");
    let idles =
        |i: &Insn| sleeps(i) || i.mnemonic.starts_with("nop") || matches!(i.mnemonic.as_str(), "dsb" | "dmb" | "isb");
    let mut out = Vec::new();
    for (_, insns) in functions {
        for (j, b) in insns.iter().enumerate() {
            let Flow::Branch { target } = b.flow else { continue };
            if b.conditional || target >= b.addr {
                continue;
            }
            let Some(i) = insns[..j].iter().position(|x| x.addr == target) else { continue };
            let body = &insns[i..j];
            if body.iter().all(|x| !x.conditional && idles(x)) && body.iter().any(sleeps) {
                out.extend(body.iter().filter(|x| sleeps(x)).map(|x| x.addr));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}
