//! Memory wait states as the core models see them: extra cycles per 32-bit instruction fetch,
//! on a taken branch's refill, and on literal loads.

use mcubench_thumb::{Insn, PC};

use crate::params::Params;

/// Extra fetch cycles: one wait-state penalty per 32-bit fetch, i.e. per 4 bytes of code.
pub(crate) fn fetch_wait(params: &Params, insn: &Insn) -> u32 {
    match params.wait_at(insn.addr) {
        // A fetch is 32 bits: a 32-bit instruction or a word-aligned pair of 16-bit ones.
        Some(w) if w.fetch > 0 && (insn.len == 4 || insn.addr.is_multiple_of(4)) => w.fetch,
        _ => 0,
    }
}

/// Data wait states of a literal (PC-relative) load, whose address is static.
pub(crate) fn literal_wait(params: &Params, insn: &Insn) -> u32 {
    match insn.mem {
        Some(m) if !m.store && m.base == PC => {
            let addr = (insn.addr.wrapping_add(4) & !3).wrapping_add(m.offset as u32);
            params.wait_at(addr).map_or(0, |w| w.data)
        }
        _ => 0,
    }
}

/// The branch refill including the target's fetch wait states (targets are usually in the
/// same memory as the branch).
pub(crate) fn refill(params: &Params, insn: &Insn) -> u32 {
    params.branch_refill + params.wait_at(insn.addr).map_or(0, |w| w.fetch)
}
