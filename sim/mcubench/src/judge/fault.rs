//! The fault status registers of a `fault` record in words: which bits of CFSR and HFSR are set,
//! what each means and, where there is one, what to do about it.
//!
//! Register layout: ARMv7-M Architecture Reference Manual (ARM DDI 0403E), B3.2.15 "Configurable
//! Fault Status Register, CFSR" (MMFSR = bits 7:0, BFSR = bits 15:8, UFSR = bits 31:16) and
//! B3.2.16 "HardFault Status Register, HFSR"; ARMv8-M Architecture Reference Manual (ARM DDI
//! 0553), registers CFSR/MMFSR/BFSR/UFSR and HFSR, which keeps the v7-M bits and adds UFSR.STKOF
//! (CFSR bit 20, stack-limit violation). ARMv6-M has neither register: its firmware reports 0 for
//! both, and 0 decodes to nothing.

/// (bit, name, meaning) of every defined CFSR bit, in bit order, with the sub-register it is in.
const CFSR_BITS: [(u32, &str, &str); 20] = [
    // MMFSR: MemManage faults (MPU and execute-never violations).
    (0, "IACCVIOL", "instruction fetch from a region that does not permit execution (MPU or XN), at the stacked PC"),
    (1, "DACCVIOL", "data access the MPU does not permit, by the instruction at the stacked PC"),
    (3, "MUNSTKERR", "MPU violation while unstacking on exception return"),
    (4, "MSTKERR", "MPU violation while stacking on exception entry (stack overflow into a protected region?)"),
    (5, "MLSPERR", "MPU violation during lazy floating-point state preservation"),
    (7, "MMARVALID", "MMFAR holds the faulting data address (not in the fault record)"),
    // BFSR: BusFaults (an access no device answered, or answered with an error).
    (8, "IBUSERR", "bus error on an instruction fetch (executing from an address with no memory?)"),
    (9, "PRECISERR", "precise data bus error: the stacked PC is the faulting load or store"),
    (10, "IMPRECISERR", "imprecise data bus error: a buffered store failed, somewhere before the stacked PC"),
    (11, "UNSTKERR", "bus error while unstacking on exception return"),
    (12, "STKERR", "bus error while stacking on exception entry (the stack pointer left RAM: stack overflow?)"),
    (13, "LSPERR", "bus error during lazy floating-point state preservation"),
    (15, "BFARVALID", "BFAR holds the faulting data address (not in the fault record)"),
    // UFSR: UsageFaults (the instruction itself cannot run).
    (16, "UNDEFINSTR", "undefined instruction (code built for another core, or a jump into data?)"),
    (
        17,
        "INVSTATE",
        "invalid state: execution with the Thumb bit clear (a branch or call to an even address, e.g. a function pointer without bit 0)",
    ),
    (18, "INVPC", "invalid PC on exception return (a bad EXC_RETURN value, or a corrupted stack)"),
    (
        19,
        "NOCP",
        "coprocessor access while the FPU is disabled: enable it in CPACR (CP10/CP11 full access, then DSB/ISB) before the first floating-point instruction, or build without -mfloat-abi=hard/softfp",
    ),
    (20, "STKOF", "stack overflow: the stack pointer went below its limit register (MSPLIM/PSPLIM, ARMv8-M)"),
    (
        24,
        "UNALIGNED",
        "unaligned access (an LDM/STM/LDRD/STRD or exclusive access needs alignment, or CCR.UNALIGN_TRP is set)",
    ),
    (25, "DIVBYZERO", "integer division by zero with CCR.DIV_0_TRP set"),
];

/// (bit, name, meaning) of every defined HFSR bit.
const HFSR_BITS: [(u32, &str, &str); 3] = [
    (1, "VECTTBL", "bus error reading the vector table on exception entry (is VTOR or the table right?)"),
    (
        30,
        "FORCED",
        "a MemManage, BusFault or UsageFault escalated to HardFault (its handler is disabled or could not run), CFSR says which",
    ),
    (31, "DEBUGEVT", "a debug event (e.g. BKPT) with the debugger and DebugMonitor disabled"),
];

fn sub_register(bit: u32) -> &'static str {
    match bit {
        0..=7 => "MemManage",
        8..=15 => "BusFault",
        _ => "UsageFault",
    }
}

/// The set bits of `value` in words: `NAME — meaning` for each defined bit, `reserved bit N` for
/// others, joined by "; "; empty for 0.
fn describe(value: u32, bits: &[(u32, &str, &str)], group: impl Fn(u32) -> Option<&'static str>) -> String {
    let mut parts = Vec::new();
    let mut last_group = None;
    for bit in 0..32 {
        if value & (1 << bit) == 0 {
            continue;
        }
        let text = match bits.iter().find(|(b, ..)| *b == bit) {
            Some((_, name, meaning)) => format!("{name} — {meaning}"),
            None => format!("reserved bit {bit}"),
        };
        // Name the sub-register once, before its first bit.
        let g = group(bit);
        match g {
            Some(g) if last_group != Some(g) => parts.push(format!("{g}: {text}")),
            _ => parts.push(text),
        }
        last_group = g;
    }
    parts.join("; ")
}

/// CFSR in words, e.g. `UsageFault: NOCP — coprocessor access while the FPU is disabled: ...`;
/// `None` for 0. The bits are separated by "; " (no meaning contains one).
pub fn describe_cfsr(cfsr: u32) -> Option<String> {
    (cfsr != 0).then(|| describe(cfsr, &CFSR_BITS, |b| Some(sub_register(b))))
}

/// HFSR in words, e.g. `FORCED — a MemManage, BusFault or UsageFault escalated ...`; `None` for 0.
pub fn describe_hfsr(hfsr: u32) -> Option<String> {
    (hfsr != 0).then(|| describe(hfsr, &HFSR_BITS, |_| None))
}

/// `cfsr=0x........ (words), hfsr=0x........ (words)`, the words only for non-zero registers.
pub fn status_text(cfsr: u32, hfsr: u32) -> String {
    let with = |name: &str, v: u32, words: Option<String>| match words {
        Some(w) => format!("{name}=0x{v:08x} ({w})"),
        None => format!("{name}=0x{v:08x}"),
    };
    format!("{}, {}", with("cfsr", cfsr, describe_cfsr(cfsr)), with("hfsr", hfsr, describe_hfsr(hfsr)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nocp_says_the_fpu_is_disabled_and_forced_says_escalated() {
        let c = describe_cfsr(0x0008_0000).unwrap();
        assert!(
            c.starts_with("UsageFault: NOCP — coprocessor access while the FPU is disabled: enable it in CPACR"),
            "{c}"
        );
        let h = describe_hfsr(0x4000_0000).unwrap();
        assert!(h.starts_with("FORCED — a MemManage, BusFault or UsageFault escalated to HardFault"), "{h}");
        let s = status_text(0x0008_0000, 0x4000_0000);
        assert!(s.starts_with("cfsr=0x00080000 (UsageFault: NOCP — "), "{s}");
        assert!(s.contains("), hfsr=0x40000000 (FORCED — "), "{s}");
    }

    #[test]
    fn every_defined_bit_has_its_name_and_sub_register() {
        for (_, _, meaning) in CFSR_BITS.iter().chain(&HFSR_BITS) {
            assert!(!meaning.contains(';'), "`;` separates bits: {meaning}");
        }
        for (bit, name, _) in CFSR_BITS {
            let d = describe_cfsr(1 << bit).unwrap();
            assert!(d.starts_with(&format!("{}: {name} — ", sub_register(bit))), "bit {bit}: {d}");
        }
        for (bit, name, _) in HFSR_BITS {
            assert!(describe_hfsr(1 << bit).unwrap().starts_with(&format!("{name} — ")));
        }
        // The sub-register boundaries of the ARM ARM: MMFSR 7:0, BFSR 15:8, UFSR 31:16.
        assert_eq!(describe_cfsr(0x0000_0082).unwrap().matches("MemManage:").count(), 1);
        assert!(describe_cfsr(0x0000_0100).unwrap().starts_with("BusFault: IBUSERR"));
        assert!(describe_cfsr(0x0002_0000).unwrap().starts_with("UsageFault: INVSTATE — "));
        assert!(describe_cfsr(0x0000_0400).unwrap().starts_with("BusFault: IMPRECISERR — imprecise"));
        assert!(describe_cfsr(0x0010_0000).unwrap().starts_with("UsageFault: STKOF — "));
        assert!(describe_cfsr(0x0200_0000).unwrap().starts_with("UsageFault: DIVBYZERO — "));
    }

    #[test]
    fn several_bits_are_listed_in_order_with_each_sub_register_named_once() {
        // DACCVIOL + MMARVALID (MemManage), PRECISERR + BFARVALID (BusFault), UNALIGNED (UsageFault).
        let d = describe_cfsr(0x0100_8282).unwrap();
        let names: Vec<&str> = d.split("; ").map(|p| p.split(" — ").next().unwrap()).collect();
        assert_eq!(
            names,
            ["MemManage: DACCVIOL", "MMARVALID", "BusFault: PRECISERR", "BFARVALID", "UsageFault: UNALIGNED"]
        );
        assert_eq!(
            describe_hfsr(0xc000_0002).unwrap().split("; ").map(|p| p.split(" — ").next().unwrap()).collect::<Vec<_>>(),
            ["VECTTBL", "FORCED", "DEBUGEVT"]
        );
    }

    #[test]
    fn zero_and_reserved_bits() {
        // ARMv6-M firmware reports both registers as 0: nothing to decode.
        assert_eq!(describe_cfsr(0), None);
        assert_eq!(describe_hfsr(0), None);
        assert_eq!(status_text(0, 0), "cfsr=0x00000000, hfsr=0x00000000");
        assert_eq!(describe_cfsr(1 << 2).unwrap(), "MemManage: reserved bit 2");
        assert_eq!(describe_cfsr(1 << 31).unwrap(), "UsageFault: reserved bit 31");
        assert_eq!(describe_hfsr(1).unwrap(), "reserved bit 0");
    }
}
