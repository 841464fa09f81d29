//! Cortex-M7: a 6-stage dual-issue core with branch prediction. Arm publishes no cycle table,
//! so this is an approximation (labelled as such in every report).

use mcubench_thumb::{Class, FpClass, Insn, PC};

use crate::params::Params;

/// [M7] approximation: ARMScheduleM7.td gives most integer instructions latency 1 and lets two
/// independent simple instructions issue together; loads have latency 2 (a dependent use
/// stalls one cycle); MUL latency 2; divides 7 (estimate); branches are predicted.
/// Returns the cost and whether this instruction was the second of a dual-issued pair.
pub(crate) fn cost(params: &Params, prev: Option<&Insn>, insn: &Insn, prev_paired: bool) -> (u32, bool) {
    let simple = |i: &Insn| {
        matches!(i.class, Class::Alu | Class::Load { .. } | Class::Store { .. } | Class::Hint) && !i.writes.contains(PC)
    };
    let independent = |p: &Insn, i: &Insn| (p.writes.0 & i.reads.0) == 0;
    if let Some(p) = prev
        && !prev_paired
        && simple(p)
        && simple(insn)
        && independent(p, insn)
        // Two memory accesses do not dual issue (one load/store pipe for this estimate).
        && !(p.mem.is_some() && insn.mem.is_some())
    {
        return (0, true);
    }
    let stall = match prev {
        Some(p) if matches!(p.class, Class::Load { .. } | Class::LoadDouble) && (p.writes.0 & insn.reads.0) != 0 => 1,
        _ => 0,
    };
    let base = match insn.class {
        Class::Div => params.divide,
        Class::LoadDouble | Class::StoreDouble => 2,
        Class::LoadMultiple { regs } | Class::StoreMultiple { regs } => 1 + u32::from(regs).div_ceil(2),
        Class::TableBranch => 3,
        Class::Fp(FpClass::DivSqrt { double }) => {
            if double {
                29
            } else {
                14
            }
        }
        Class::Fp(FpClass::LoadMultiple { regs, .. } | FpClass::StoreMultiple { regs, .. }) => 1 + u32::from(regs),
        _ => 1,
    };
    let unconditional_pc = insn.writes.contains(PC) && !insn.conditional;
    (base + stall + if unconditional_pc { params.branch_refill } else { 0 }, false)
}

/// The extra cycles when `insn`, a conditional branch, is taken.
pub(crate) fn taken_extra(params: &Params, insn: &Insn) -> u32 {
    if insn.conditional && insn.writes.contains(PC) { params.branch_refill } else { 0 }
}
