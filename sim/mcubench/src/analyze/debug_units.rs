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
use mcubench_thumb::Decoder;
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
        let Some(bytes) = map.code(image, f) else { continue };
        let (insns, _) = decoder.decode_block(f.start, bytes);
        let accesses = mcubench_stack::frame::constant_accesses(image, &insns, [None; 16]);
        if accesses.into_iter().any(|(addr, store)| wanted(addr, store)) {
            out.push(f.demangled.clone());
        }
    }
    out
}
