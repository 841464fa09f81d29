//! ARMv6-M: the Cortex-M0 (3-stage) and Cortex-M0+ (2-stage), priced from their TRMs' Table 3-1.
//! No load/store pipelining; a taken branch costs 1 + P with P = 2 (M0) or 1 (M0+).

use mcubench_thumb::{Class, Flow, Insn};
use mcubench_wire::Core;

use crate::fetch::{literal_wait, refill};
use crate::insn::{conditional_branch, writes_pc};
use crate::m3m4;
use crate::params::{Multiplier, Params};

/// Cost of `insn` after `prev`, and the extra cycles if it is a conditional branch that is taken.
pub(crate) fn cost(params: &Params, core: Core, prev: Option<&Insn>, insn: &Insn) -> (u32, u32) {
    let p = refill(params, insn);
    let taken_pc = |base: u32| if conditional_branch(insn) { (base, p) } else { (base + p, 0) };
    match insn.class {
        // [M0] B<cc> 1 or 3, B 3, BX/BLX 3 (1 + P, P = 2); BL 4 (32-bit, 1 + P + 1). [M0+] one
        // less each (P = 1).
        Class::Branch => {
            if matches!(insn.flow, Flow::Call { .. }) {
                (2 + p, 0)
            } else {
                taken_pc(1)
            }
        }
        // [M0] MOV/ADD to PC 3 = 1 + P.
        Class::Alu => {
            if writes_pc(insn) {
                taken_pc(1)
            } else {
                (1, 0)
            }
        }
        // [M0] §3.3: MULS 1 or 32 cycles (implementation option, Params::m0_multiplier).
        Class::Mul => (if params.m0_multiplier == Multiplier::Small { 32 } else { 1 }, 0),
        // [M0] LDR/STR 2 (no pipelining of neighbouring loads and stores); LDR to PC is not in
        // ARMv6-M's 16-bit LDR, but priced 2 + 1 + P like POP {pc}.
        Class::Load { .. } => {
            let extra = literal_wait(params, insn);
            if writes_pc(insn) { (2 + extra + 1 + p, 0) } else { (2 + extra, 0) }
        }
        Class::Store { .. } => (2, 0),
        // [M0] LDM/STM/PUSH/POP 1+N; POP {.., pc} 4+N on the M0 (P = 2 plus one, like BL), 3+N on
        // the M0+ (P = 1 plus one).
        Class::LoadMultiple { regs } => {
            let n = u32::from(regs);
            if writes_pc(insn) { taken_pc(1 + n + 1) } else { (1 + n, 0) }
        }
        Class::StoreMultiple { regs } => (1 + u32::from(regs), 0),
        // [M0] DMB/DSB/ISB 4, [M0+] 3.
        Class::Barrier => (special(core), 0),
        // [M0] NOP, YIELD, SEV: 1.
        Class::Hint => (1, 0),
        // [M0] MRS/MSR 4, [M0+] 3, CPS 1. SVC/BKPT/UDF: the instruction only (the plugin adds
        // exception entry).
        Class::System => (if insn.mnemonic.starts_with("cps") { 1 } else { special(core) }, 0),
        // Not in ARMv6-M (the decoder refuses them for these cores): priced as ARMv7-M should
        // a caller hand one over.
        Class::TableBranch
        | Class::It
        | Class::MulAcc
        | Class::MulLong
        | Class::MulAccLong
        | Class::Dsp
        | Class::Div
        | Class::LoadDouble
        | Class::StoreDouble
        | Class::Fp(_) => m3m4::cost(params, core, prev, insn),
    }
}

/// Barriers and MRS/MSR: [M0] 4 cycles, [M0+] 3.
fn special(core: Core) -> u32 {
    if core == Core::CortexM0 { 4 } else { 3 }
}
