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

pub(crate) fn register(name: &str) -> Option<Reg> {
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

/// An operand2 register shifted inline, e.g. `add.w r3, r4, r5, ror #24`.
pub(crate) fn shifted_register(insn: &Insn) -> bool {
    let o = &insn.operands;
    insn.len == 4 && [", lsl #", ", lsr #", ", asr #", ", ror #", ", rrx"].iter().any(|s| o.contains(s))
}

/// A 32-bit data-processing immediate that is a shifted 8-bit value (github:jnk0le/random "cortex_m33.md" and "cortex_m7.md" glossaries): not
/// an 8-bit value, a 12-bit ADDW/SUBW value, a MOVW/MOVT half, or a replicated pattern
/// `0x00XY00XY`, `0xXY00XY00`, `0xXYXYXYXY`.
pub(crate) fn shifted_constant(insn: &Insn) -> bool {
    if insn.len != 4 || insn.mnemonic.starts_with("movw") || insn.mnemonic.starts_with("movt") {
        return false;
    }
    let Some(imm) = insn.operands.rsplit(',').next().and_then(|t| t.trim().strip_prefix('#')) else {
        return false;
    };
    let value = match imm.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => imm.parse::<i64>().ok().map(|v| v as u32),
    };
    let Some(v) = value else { return false };
    let twelve_bit = insn.mnemonic.starts_with("addw") || insn.mnemonic.starts_with("subw");
    let b = v & 0xff;
    !(v <= 0xff || (twelve_bit && v <= 0xfff) || v == b * 0x0001_0001 || v == b * 0x0100_0100 || v == b * 0x0101_0101)
}

/// Bitfield, extend, byte-reverse instructions (UBFX, SBFX, BFI, BFC, UXT*, SXT*, REV*, RBIT),
/// which use the Cortex-M7's early-ALU shifter.
pub(crate) fn bitfield(insn: &Insn) -> bool {
    ["ubfx", "sbfx", "bfi", "bfc", "uxt", "sxt", "rev", "rbit"].iter().any(|m| insn.mnemonic.starts_with(m))
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
