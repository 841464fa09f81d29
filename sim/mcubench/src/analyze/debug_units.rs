//! Which functions of an ELF use the core's debug units that QEMU does not model, found in the
//! code without running it, for the verdict's message: the DWT cycle counter (`DWT_CYCCNT`,
//! 0xE0001004), which reads 0, so a wait on it never ends; and the ITM (0xE0000000 up), whose
//! enable registers read 0, so what firmware prints through it (`ITM_SendChar`, printf over
//! SWO) never goes out.
//!
//! Limits: a linear scan of each function that follows registers loaded with an address (a
//! literal load, `movw`/`movt`: the stack analyzer's constant tracking) to a load or store at it;
//! an address computed otherwise, or passed in from a caller, is not seen. A hint, not a proof.

use mcubench_elf::ElfImage;
use mcubench_thumb::{Decoder, Insn};
use mcubench_wire::DWT_CYCCNT;

use crate::exec::CounterLoad;

/// The names of the functions that load `DWT_CYCCNT`, in address order.
pub fn cycle_counter_readers(image: &ElfImage, decoder: &Decoder) -> Vec<String> {
    accessing(image, decoder, |addr, store| !store && addr == DWT_CYCCNT)
}

/// The loads of `DWT_CYCCNT` into one register (`ldr rT, [rN, #4]`), in address order: the
/// instructions the live cycle counter stops at ([`crate::exec::counter`]). Loads of several
/// registers (`ldrd`, `ldm`) that include it are left out. `functions`: the image's code,
/// [`super::decoded_functions`].
pub fn cycle_counter_loads(image: &ElfImage, functions: &[(String, Vec<Insn>)]) -> Vec<CounterLoad> {
    let mut out = Vec::new();
    for (_, insns) in functions {
        for (insn, addr) in mcubench_stack::frame::constant_accesses(image, insns, [None; 16]) {
            let Some(m) = insn.mem.filter(|m| !m.store && addr == DWT_CYCCNT) else { continue };
            if !matches!(insn.class, mcubench_thumb::Class::Load { width: 4 }) {
                continue;
            }
            // The loaded register: what it writes but for a written-back base.
            let written_back = if m.writeback { 1u16 << (m.base & 15) } else { 0 };
            let loaded = insn.writes.0 & !written_back;
            if loaded.count_ones() == 1 && loaded.trailing_zeros() < 15 {
                out.push(CounterLoad { pc: insn.addr, rt: loaded.trailing_zeros() as u8 });
            }
        }
    }
    out.sort_by_key(|l| l.pc);
    out.dedup();
    out
}

/// The ITM's registers: stimulus ports at 0xE0000000, TER at 0xE0000E00, TCR at 0xE0000E80
/// (ARMv7-M ARM C1.7).
const ITM: std::ops::Range<u32> = 0xE000_0000..0xE000_1000;

/// The names of the functions that read or write the ITM, in address order.
pub fn itm_users(image: &ElfImage, decoder: &Decoder) -> Vec<String> {
    accessing(image, decoder, |addr, _| ITM.contains(&addr))
}

/// The names of the functions with a load or store whose address `wanted(address, store)`.
fn accessing(image: &ElfImage, decoder: &Decoder, wanted: impl Fn(u32, bool) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    for (name, insns) in super::decoded_functions(image, decoder) {
        let accesses = mcubench_stack::frame::constant_accesses(image, &insns, [None; 16]);
        if accesses.into_iter().any(|(insn, addr)| insn.mem.is_some_and(|m| wanted(addr, m.store))) {
            out.push(name);
        }
    }
    out
}
