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
use mcubench_elf::functions::FunctionMap;
use mcubench_thumb::{Class, Decoder};
use mcubench_wire::DWT_CYCCNT;

/// The names of the functions that load `DWT_CYCCNT`, in address order.
pub fn cycle_counter_readers(image: &ElfImage, decoder: &Decoder) -> Vec<String> {
    accessing(image, decoder, |addr, store| !store && addr == DWT_CYCCNT)
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
    let map = FunctionMap::new(image);
    let mut out = Vec::new();
    for f in map.functions().iter().filter(|f| f.thumb) {
        // The code up to the function's first literal pool or other data.
        let end = map.next_data(f.start).map_or(f.end, |d| d.start.clamp(f.start, f.end));
        let Some(bytes) = image.bytes_at(u64::from(f.start), u64::from(end - f.start)) else { continue };
        let (insns, _) = decoder.decode_block(f.start, bytes);
        // What each register is known to hold (a literal or movw/movt constant).
        let mut known: [Option<u32>; 16] = [None; 16];
        let mut found = false;
        for insn in &insns {
            if let Some(m) = insn.mem.filter(|m| m.index.is_none())
                && matches!(
                    insn.class,
                    Class::Load { .. }
                        | Class::LoadDouble
                        | Class::LoadMultiple { .. }
                        | Class::Store { .. }
                        | Class::StoreDouble
                        | Class::StoreMultiple { .. }
                )
                && known[usize::from(m.base) & 15]
                    .is_some_and(|base| wanted(base.wrapping_add(m.offset as u32), m.store))
            {
                found = true;
                break;
            }
            // The stack analyzer's constant tracking (literal loads, movw/movt, v6-M shifts).
            let set = mcubench_stack::frame::constant_set(image, insn, &known);
            for (r, k) in known.iter_mut().enumerate() {
                if insn.writes.0 & (1 << r) != 0 {
                    *k = None;
                }
            }
            if let Some((r, v)) = set {
                known[usize::from(r) & 15] = Some(v);
            }
        }
        if found {
            out.push(f.demangled.clone());
        }
    }
    out
}
