//! Instruction facts the core models share: what an instruction does to PC and which registers
//! its address uses.

use mcubench_thumb::{Class, Insn, PC, Reg, RegSet};

/// Whether `insn` writes PC as part of what it does (a branch, a return, a load or ALU write to
/// PC). Priced as taken unless it is conditional.
pub(crate) fn writes_pc(insn: &Insn) -> bool {
    insn.writes.contains(PC)
}

/// Whether `insn` is a conditional write of PC (Bcc, CBZ/CBNZ, a branch inside an IT block):
/// priced not taken, with the refill as the block's taken extra.
pub(crate) fn conditional_branch(insn: &Insn) -> bool {
    insn.conditional && writes_pc(insn)
}

/// Whether the address of `insn`'s memory access (base or index register, not PC) uses a register
/// in `written`.
pub(crate) fn address_uses(insn: &Insn, written: RegSet) -> bool {
    insn.mem.is_some_and(|m| (m.base != PC && written.contains(m.base)) || m.index.is_some_and(|r| written.contains(r)))
}

/// The accumulator registers of a multiply-accumulate: RdLo/RdHi of UMLAL/SMLAL/UMAAL (the
/// registers it both reads and writes), Ra (the last operand) of MLA/MLS/SMLA*.
pub(crate) fn accumulator(insn: &Insn) -> Option<RegSet> {
    match insn.class {
        Class::MulAccLong => Some(RegSet(insn.writes.0 & insn.reads.0)),
        Class::MulAcc => last_register(insn).map(|r| RegSet(1 << r)),
        Class::Dsp if insn.mnemonic.starts_with("smla") || insn.mnemonic.starts_with("smmla") => {
            last_register(insn).map(|r| RegSet(1 << r))
        }
        _ => None,
    }
}

fn last_register(insn: &Insn) -> Option<Reg> {
    register(insn.operands.rsplit(',').next()?.trim())
}

fn register(name: &str) -> Option<Reg> {
    Some(match name {
        "sb" => 9,
        "sl" => 10,
        "fp" => 11,
        "ip" => 12,
        "sp" => 13,
        "lr" => 14,
        "pc" => 15,
        _ => name.strip_prefix('r')?.parse::<u8>().ok().filter(|r| *r < 16)?,
    })
}
