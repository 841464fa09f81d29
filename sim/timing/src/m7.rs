//! Cortex-M7: a 6-stage, in-order, dual-issue core with branch prediction. Arm publishes no cycle
//! table, so this is an approximation (labelled as such in every report). Sources:
//!
//! - [m7-meas] github:jnk0le/random@3dfc2abd, "pipeline cycle test/doc/cortex_m7.md" (STM32H743,
//!   DWT.CYCCNT): dual-issue restrictions, load and multiply latencies, LDM/STM timing, branches.
//! - [quinapalus] https://quinapalus.com/cm7cycles.html (STM32H730, caches on): instruction pair
//!   timings and dual-issue combinations.
//! - [M7-llvm] LLVM ARMScheduleM7.td: latencies where the measurements say nothing (divide, FP).
//!
//! Not modelled: bank conflicts of paired loads when the addresses are not statically known
//! (such loads are priced unpaired), the "slippery" half-cycle slides of 16-bit code, flag
//! forwarding, branch mispredictions (direct branches are priced as predicted; indirect ones pay
//! [`Params::branch_refill`] as an average), caches and TCM wait states.

use mcubench_thumb::{Class, Flow, FpClass, Insn, PC, RegSet};

use crate::insn::{accumulator, address_uses, bitfield, shifted_constant, shifted_register};
use crate::params::Params;

/// The cost of `insn` after `prev` (0 when it dual issues as the younger of a pair) and whether
/// it paired (so the next instruction cannot pair with it).
pub(crate) fn cost(params: &Params, prev: Option<&Insn>, insn: &Insn, prev_paired: bool) -> (u32, bool) {
    if let Some(p) = prev
        && !prev_paired
        && pairs(p, insn)
    {
        return (0, true);
    }
    let stall = prev.map_or(0, |p| stall_after(p, insn));
    let base = match insn.class {
        Class::Div => params.divide,
        // [m7-meas] "load/store pair/multiple ... takes ceil(regnum/2) cycles to execute".
        Class::LoadDouble | Class::StoreDouble => 1,
        Class::LoadMultiple { regs } | Class::StoreMultiple { regs } => u32::from(regs).div_ceil(2).max(1),
        // A byte/halfword load, then the branch: [M7-llvm] TBB latency 3 (no measurement found).
        Class::TableBranch => 3,
        // [m7-meas] "`vdiv.f`/`vsqrt.f` execute in 16/14 cycles"; `vdiv.d` 30.
        Class::Fp(FpClass::DivSqrt { double }) => {
            if double {
                30
            } else if insn.mnemonic.starts_with("vdiv") {
                16
            } else {
                14
            }
        }
        // [m7-meas] "`vldm` behaves as regular `ldm`": ceil(words/2).
        Class::Fp(FpClass::LoadMultiple { regs, double } | FpClass::StoreMultiple { regs, double }) => {
            (u32::from(regs) * if double { 2 } else { 1 }).div_ceil(2).max(1)
        }
        _ => 1,
    };
    let unconditional_indirect = insn.writes.contains(PC) && !insn.conditional && !direct_branch(insn);
    (base + stall + if unconditional_indirect { params.branch_refill } else { 0 }, false)
}

/// The extra cycles when `insn`, a conditional branch, is taken: none for a direct branch, which
/// the predictor gets right in the loops this is mostly used for ([m7-meas] "Predicted (any
/// direction and length) taken branch is capable of dual issuing with one instruction at
/// destination address"); P for a conditional indirect one.
pub(crate) fn taken_extra(params: &Params, insn: &Insn) -> u32 {
    if insn.conditional && insn.writes.contains(PC) && !direct_branch(insn) { params.branch_refill } else { 0 }
}

/// B, Bcc, BL, CBZ/CBNZ: target known to the branch target address cache.
fn direct_branch(insn: &Insn) -> bool {
    insn.class == Class::Branch && matches!(insn.flow, Flow::Branch { .. } | Flow::Call { .. })
}

/// Whether `insn` issues in the same cycle as `older` ([m7-meas], [quinapalus]).
fn pairs(older: &Insn, insn: &Insn) -> bool {
    let pairable = |i: &Insn| match i.class {
        Class::Alu | Class::Hint | Class::Load { .. } | Class::Store { .. } | Class::It => !i.writes.contains(PC),
        Class::Mul | Class::MulAcc | Class::MulLong | Class::MulAccLong | Class::Dsp => true,
        // "not-taken branch can dual issue with following instruction"; a predicted taken one
        // "with one instruction at destination": a direct branch pairs as the younger op.
        Class::Branch => direct_branch(i),
        // "`vldr.f` can be dual issued".
        Class::Fp(FpClass::Load { double: false }) => true,
        // LDM/STM/LDRD/STRD "cannot dual issue with preceding or following instructions"; FP
        // arithmetic is left unpaired.
        _ => false,
    };
    if !pairable(older) || !pairable(insn) || direct_branch(older) {
        return false;
    }
    // In order: the younger op cannot use the older op's result in the same cycle.
    if older.writes.0 & insn.reads.0 != 0 {
        return false;
    }
    let mul = |i: &Insn| matches!(i.class, Class::Mul | Class::MulAcc | Class::MulLong | Class::MulAccLong);
    let load = |i: &Insn| matches!(i.class, Class::Load { .. } | Class::Fp(FpClass::Load { .. }));
    let store = |i: &Insn| matches!(i.class, Class::Store { .. });
    // "multiplication, MAC: can't dual issue wrt each other ... can't dual issue with stores";
    // bitfield/DSP "cannot dual issue wrt each other" and "must be placed in older op".
    if (mul(older) || older.class == Class::Dsp) && (mul(insn) || insn.class == Class::Dsp) {
        return false;
    }
    if insn.class == Class::Dsp || (mul(older) && store(insn)) || (store(older) && mul(insn)) {
        return false;
    }
    // Only one instruction that uses the early-ALU shifter issues per cycle ([m7-meas] operand2
    // matrix: shifted constant / inline shifted register with each other "-"; bitfield ops "can't
    // be dual issued with operand2 inline_shifted_reg/shifted_constant"); bitfield/extend/REV
    // only as the older op ("the bitfield/dsp instructions must be placed in older op").
    if bitfield(insn) || (shifter(older) && shifter(insn)) {
        return false;
    }
    // Stores: "cannot dual issue two stores", "can be dual issued with load". Two loads: only to
    // different banks (even/odd words): known here for the same base with offsets 4 apart mod 8.
    if store(older) && store(insn) {
        return false;
    }
    if load(older) && load(insn) {
        return match (older.mem, insn.mem) {
            (Some(a), Some(b)) => {
                a.base == b.base
                    && a.index.is_none()
                    && b.index.is_none()
                    && !a.writeback
                    && (a.offset - b.offset).rem_euclid(8) == 4
            }
            _ => false,
        };
    }
    true
}

/// Uses the early-ALU shifter: an inline shifted register, a shifted constant, a bitfield op.
fn shifter(i: &Insn) -> bool {
    i.class == Class::Alu && (shifted_register(i) || shifted_constant(i) || bitfield(i))
}

/// Stall cycles of `insn` right after `prev` (not paired with it).
fn stall_after(prev: &Insn, insn: &Insn) -> u32 {
    let mut results = prev.writes.0 & !(1 << PC);
    if let Some(m) = prev.mem
        && m.writeback
    {
        results &= !(1 << m.base);
    }
    let results = RegSet(results);
    if results.0 & insn.reads.0 == 0 {
        return 0;
    }
    let mul = |i: &Insn| matches!(i.class, Class::Mul | Class::MulAcc | Class::MulLong | Class::MulAccLong);
    match prev.class {
        // "word loads can be consumed by late ALU in next cycle"; "byte/half loads ... 1 extra
        // cycle of result latency"; multiplies "can't consume `ldr` result from previous cycle";
        // an address is generated early (AGU), a cycle before the late ALU.
        Class::Load { width } => u32::from(width < 4 || mul(insn) || address_uses(insn, results)),
        Class::LoadDouble | Class::LoadMultiple { .. } => u32::from(mul(insn) || address_uses(insn, results)),
        // "all multiplications and multiply accumulates have 1 additional cycle of result
        // latency"; "all multiply accumulates can be chained on accumulator dependency each cycle".
        Class::Mul | Class::MulAcc | Class::MulLong | Class::MulAccLong => {
            let accumulate_only = accumulator(insn).is_some_and(|acc| results.0 & insn.reads.0 & !acc.0 == 0);
            u32::from(!accumulate_only)
        }
        // bitfield/DSP "result cannot be used as index or address by load/store instructions in
        // next cycle".
        Class::Dsp => u32::from(address_uses(insn, results)),
        Class::Alu if bitfield(prev) => u32::from(address_uses(insn, results)),
        // "inline shifted/rotated (register) operand is consumed in early ALU (source must be
        // available a cycle earlier than normally)", while simple add/sub/mov results forward to
        // the early ALU next cycle: a shifter op right after another one's result waits one.
        Class::Alu if shifter(insn) && shifter(prev) => 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use crate::{Core, Model};
    use mcubench_thumb::Decoder;

    fn cycles(halfwords: &[u16]) -> u64 {
        let bytes: Vec<u8> = halfwords.iter().flat_map(|h| h.to_le_bytes()).collect();
        let (insns, err) = Decoder::for_core(Core::CortexM7).unwrap().decode_block(0x100, &bytes);
        assert!(err.is_none(), "{err:?}");
        Model::new(Core::CortexM7).block(&insns).fall_through
    }

    /// [m7-meas]'s pairing restrictions, one pair each.
    #[test]
    fn dual_issue_restrictions() {
        // ldr r1, [r2]; ldr r3, [r2, #4]: different banks, pair. [r2, #8]: same bank, not.
        assert_eq!(cycles(&[0x6811, 0x6853]), 1);
        assert_eq!(cycles(&[0x6811, 0x6893]), 2);
        // str r1, [r2]; str r3, [r2, #4]: two stores never pair; ldr + str pair.
        assert_eq!(cycles(&[0x6011, 0x6053]), 2);
        assert_eq!(cycles(&[0x6811, 0x6053]), 1);
        // add.w r0, r1, r2, lsl #4; add.w r3, r4, r5, lsl #4: one shifter per cycle. With a plain
        // add.w r0, r1, r2 first they pair.
        assert_eq!(cycles(&[0xeb01, 0x1002, 0xeb04, 0x1305]), 2);
        assert_eq!(cycles(&[0xeb01, 0x0002, 0xeb04, 0x1305]), 1);
        // adds r0, r1, r2; adds r3, r0, r4: dependent, no pair.
        assert_eq!(cycles(&[0x1888, 0x1903]), 2);
        // ldmia r2, {r3, r4, r5, r6}: ceil(4/2) = 2, alone.
        assert_eq!(cycles(&[0xca78]), 2);
    }
}
