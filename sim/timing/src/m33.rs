//! Cortex-M33 (ARMv8-M Mainline): its own 3-stage pipeline, not the Cortex-M4's. Arm's M33 TRM
//! gives no instruction timing table, so the rules come from Arm's description of the pipeline and
//! from public board measurements:
//!
//! - [m33-meas] github:jnk0le/random@3dfc2abd, "pipeline cycle test/doc/cortex_m33.md": RP2350
//!   (Cortex-M33 r1p0) measured with DWT.CYCCNT, per-instruction issue, latency and dual issue.
//! - [m33-arm] Arm, Cortex-M33 introduction (as summarised in elektroniknet.de, "Cortex-M23 und
//!   M33 sind erste ARMv8-M-CPUs", p. 3): a new pipeline, two stages like the M0+ plus a third
//!   for multiply, MAC, SIMD and divide; all branches resolved in stage 2; limited dual issue of
//!   16-bit instructions and branches; address generation in stage 2, so loads issue in one cycle
//!   (two on the M3/M4).
//! - [KA001260] Arm knowledge article KA001260: MULS stalls for an additional cycle.
//!
//! The model prices each instruction by its issue cycles, plus one stall cycle when the next
//! instruction needs a result with a two-cycle latency, minus what dual issue saves. Data-
//! dependent timings (divide) use [`Params::divide`].

use mcubench_thumb::{Class, Flow, FpClass, Insn, PC, RegSet};

use crate::Pipe;
use crate::fetch::{literal_wait, refill};
use crate::insn::{accumulator, address_uses, conditional_branch, shifted_constant, shifted_register, writes_pc};
use crate::params::Params;

/// Cost of `insn` after `prev`, and the extra cycles if it is a conditional branch that is taken.
/// Updates `pipe.dual_issued` (whether `insn` issued as the second of a pair).
pub(crate) fn cost(params: &Params, pipe: &mut Pipe, prev: Option<&Insn>, insn: &Insn) -> (u32, u32) {
    let p = refill(params, insn);
    // [m33-meas] "only two 16 bit (`.n`) instructions can dual issue"; the first of the pair must
    // not itself be the second of another pair.
    // Both issue in one cycle only if the second needs no register the first writes.
    let pair_prev = prev.filter(|q| q.len == 2 && insn.len == 2 && !pipe.dual_issued && q.writes.0 & insn.reads.0 == 0);
    let (issue, taken, paired) = issue(params, p, pair_prev, insn);
    pipe.dual_issued = paired;
    let stall = if paired { 0 } else { prev.map_or(0, |q| stall_after(q, insn)) };
    (issue + stall, taken)
}

/// Issue cycles, taken extra, and whether `insn` dual-issued with `pair_prev`.
fn issue(params: &Params, p: u32, pair_prev: Option<&Insn>, insn: &Insn) -> (u32, u32, bool) {
    let single = |c: u32| (c, 0, false);
    match insn.class {
        // [m33-meas] "not taken branch, can dual issue (from slot 1) even when preceded with flag
        // generating instruction" (0 cycles not taken, `subs; bne` taken 2); "taken branch, can
        // dual issue when preceded by 16 bit instruction that doesn't generate condition flags.
        // It's effectively executing in 1 cycle"; "branch can dual issue with load/store multiple
        // as well". Otherwise a branch is 1 + P ([m33-arm]: resolved in stage 2, P = 1).
        Class::Branch => {
            let call = matches!(insn.flow, Flow::Call { .. });
            match pair_prev {
                Some(q) if conditional_branch(insn) => (0, if sets_flags(q) { 1 + p } else { p }, true),
                Some(q) if !call && !sets_flags(q) => (p, 0, true),
                _ if conditional_branch(insn) => (1, p, false),
                _ => single(1 + p),
            }
        }
        // TBB/TBH: a byte/halfword load (1) whose result is the branch offset (load-to-use
        // latency 2, [m33-meas]), then the refill: 2 + P, as on the M4.
        Class::TableBranch => single(2 + p),
        // [m33-meas] "`it` can dual issue with preceding instruction, no restrictions on when/where
        // condition flags were generated" (a 16-bit one, as every pair).
        Class::It => {
            if pair_prev.is_some() {
                (0, 0, true)
            } else {
                single(1)
            }
        }
        // [m33-meas] "`nop` can dual issue with arithmetic or load/store instruction" (as the
        // second of the pair).
        Class::Hint => match pair_prev {
            Some(q) if matches!(q.class, Class::Alu | Class::Load { .. } | Class::Store { .. }) => (0, 0, true),
            _ => single(1),
        },
        Class::Alu => {
            if writes_pc(insn) {
                // MOV/ADD to PC: a branch resolved in stage 2.
                return if conditional_branch(insn) { (1, p, false) } else { single(1 + p) };
            }
            // [m33-meas] instructions executing through two stages that set the flags (operand2
            // shifted constant) "take a total of 2 cycles to execute".
            single(if sets_flags(insn) && shifted_constant(insn) { 2 } else { 1 })
        }
        // [m33-meas]/[KA001260] `muls.n` (flag setting) takes 2 cycles; other multiplies issue in
        // one (results after two, see `stall_after`).
        Class::Mul => single(if sets_flags(insn) { 2 } else { 1 }),
        Class::MulAcc | Class::MulLong | Class::MulAccLong | Class::Dsp => single(1),
        // Data dependent; the documented estimate of Params::divide.
        Class::Div => single(params.divide),
        // [m33-arm] loads issue in one cycle (address generated in stage 2); [m33-meas] load to
        // use latency 2 (see `stall_after`). LDR to PC: 1 + the load-to-use cycle + P.
        Class::Load { .. } => {
            let extra = literal_wait(params, insn);
            if writes_pc(insn) { single(2 + p + extra) } else { single(1 + extra) }
        }
        Class::Store { .. } => single(1),
        // [m33-meas] "load/store double execute in 2 cycles".
        Class::LoadDouble | Class::StoreDouble => single(2),
        // [m33-meas] "load/store multiple of x registers execute in exactly x cycles"; with PC
        // the loaded PC waits its load-to-use cycle, then the refill.
        Class::LoadMultiple { regs } => {
            let n = u32::from(regs).max(1);
            if !writes_pc(insn) {
                single(n)
            } else if conditional_branch(insn) {
                (n + 1, p, false)
            } else {
                single(n + 1 + p)
            }
        }
        Class::StoreMultiple { regs } => single(u32::from(regs).max(1)),
        // As on the M4 (DMB/DSB/ISB 1 + B with an idle bus; MRS/MSR 2, CPS 1).
        Class::Barrier => single(1),
        Class::System => single(if insn.mnemonic.starts_with("cps") { 1 } else { 2 }),
        Class::Fp(fp) => single(fp_issue(params, insn, fp)),
    }
}

/// FPv5 single precision on the M33 ([m33-meas] "fpu").
fn fp_issue(params: &Params, insn: &Insn, fp: FpClass) -> u32 {
    match fp {
        // VADD/VMUL/...: issue every cycle (result latency 2, FP registers not tracked here).
        FpClass::Alu { .. } | FpClass::Compare { .. } | FpClass::System | FpClass::MoveCore => 1,
        // "FMA/MLA execute in 1 cycle ... No other floating point instruction can be issued in the
        // following 2 cycles": 3 when FP code follows, as it does in FP kernels.
        FpClass::MulAcc { .. } | FpClass::FusedMulAcc { .. } => 3,
        // Not measured there; as the M4's FPv4-SP table (VDIV/VSQRT 14).
        FpClass::DivSqrt { .. } => 14,
        // "load/store double execute in 2 cycles (applies to FPU)"; VLDR.32 one cycle.
        FpClass::Load { double } => (if double { 2 } else { 1 }) + literal_wait(params, insn),
        FpClass::Store { double } => {
            if double {
                2
            } else {
                1
            }
        }
        // "load/store multiple of x registers execute in exactly x cycles (also applies to FPU)":
        // x words.
        FpClass::LoadMultiple { regs, double } | FpClass::StoreMultiple { regs, double } => {
            (u32::from(regs) * if double { 2 } else { 1 }).max(1)
        }
        // "`vmov` of two S (or one D) registers to two GPR takes 2 cycles".
        FpClass::MoveCore2 => 2,
    }
}

/// One stall cycle when `insn` needs, in its first cycle, a result `prev` delivers with a latency
/// of two cycles ([m33-meas] "overall", "load/store").
fn stall_after(prev: &Insn, insn: &Insn) -> u32 {
    let results = RegSet(results_of(prev).0 & insn.reads.0);
    if results.is_empty() {
        return 0;
    }
    // "load to store latency is 1 cycle"; "can store result from accumulate stage in 1 cycle":
    // a result stored as data (not used for the address) does not stall.
    if insn.mem.is_some_and(|m| m.store) && !address_uses(insn, results) {
        return 0;
    }
    let to_accumulator = accumulator(insn).is_some_and(|acc| results.0 & !acc.0 == 0);
    match prev.class {
        // "load to use latency is 2 cycles"; "load result can be consumed as MAC accumulate
        // dependency in 1 cycle".
        Class::Load { .. } | Class::LoadDouble | Class::LoadMultiple { .. } => u32::from(!to_accumulator),
        // "multiply accumulates have 2 cycle result latency, accumulate dependency can be chained
        // from previous MAC, `*xta*` or operand2 (shifted reg/constant) insns".
        Class::Mul | Class::MulAcc | Class::MulLong | Class::MulAccLong => u32::from(!to_accumulator),
        // "DSP and SIMD instructions have 2 cycle result latency (no chaining from accumulator
        // stage)".
        Class::Dsp => 1,
        // "result latency of operand2 shifted reg/constant instructions is 2 cycles"; "{u,s}xta*
        // have 2 cycle result latency".
        Class::Alu if shifted_register(prev) || shifted_constant(prev) || prev.mnemonic.contains("xta") => {
            u32::from(!to_accumulator)
        }
        _ => 0,
    }
}

/// Registers whose new value comes out of `insn`'s execution (a load's data, an ALU result) —
/// not the base register a load writes back, which the address stage updates early.
fn results_of(insn: &Insn) -> RegSet {
    let mut w = insn.writes.0 & !(1 << PC);
    if let Some(m) = insn.mem
        && m.writeback
        && matches!(insn.class, Class::Load { .. } | Class::LoadDouble | Class::LoadMultiple { .. })
    {
        w &= !(1 << m.base);
    }
    RegSet(w)
}

/// Whether an ALU or multiply instruction sets the condition flags: CMP/CMN/TST/TEQ, or the
/// `S` form (`adds`, `muls`; inside an IT block the condition suffix is stripped first).
pub(crate) fn sets_flags(insn: &Insn) -> bool {
    if !matches!(insn.class, Class::Alu | Class::Mul) {
        return false;
    }
    let m = insn.mnemonic.split('.').next().unwrap_or("");
    let m = if insn.conditional && m.len() > 3 { &m[..m.len() - 2] } else { m };
    matches!(m, "cmp" | "cmn" | "tst" | "teq") || m.ends_with('s')
}
