//! Instruction facts the core models share: what an instruction does to PC and which registers
//! its address uses.

use mcubench_thumb::{Insn, PC, RegSet};

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
