//! Which functions of an ELF read the DWT cycle counter (`DWT_CYCCNT`, 0xE0001004), found in
//! the code without running it: for the timeout message, since a wait on that counter never ends
//! under QEMU, where it reads 0.
//!
//! Limits: a linear scan of each function that follows registers loaded with the counter's or
//! the DWT block's address (a literal load, `movw`/`movt`: the stack analyzer's constant
//! tracking) to a load from it; an address
//! computed otherwise, or passed in from a caller, is not seen. A hint, not a proof.

use mcubench_elf::ElfImage;
use mcubench_elf::functions::FunctionMap;
use mcubench_thumb::{Class, Decoder};
use mcubench_wire::DWT_CYCCNT;

/// The names of the functions that load `DWT_CYCCNT`, in address order.
pub fn readers(image: &ElfImage, decoder: &Decoder) -> Vec<String> {
    let map = FunctionMap::new(image);
    let mut out = Vec::new();
    for f in map.functions().iter().filter(|f| f.thumb) {
        // The code up to the function's first literal pool or other data.
        let end = map.next_data(f.start).map_or(f.end, |d| d.start.clamp(f.start, f.end));
        let Some(bytes) = image.bytes_at(u64::from(f.start), u64::from(end - f.start)) else { continue };
        let (insns, _) = decoder.decode_block(f.start, bytes);
        // What each register is known to hold (a literal or movw/movt constant).
        let mut known: [Option<u32>; 16] = [None; 16];
        let mut reads = false;
        for insn in &insns {
            if let Some(m) = insn.mem.filter(|m| !m.store && m.index.is_none())
                && matches!(insn.class, Class::Load { .. } | Class::LoadDouble | Class::LoadMultiple { .. })
                && known[usize::from(m.base) & 15].is_some_and(|base| base.wrapping_add(m.offset as u32) == DWT_CYCCNT)
            {
                reads = true;
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
        if reads {
            out.push(f.demangled.clone());
        }
    }
    out
}
