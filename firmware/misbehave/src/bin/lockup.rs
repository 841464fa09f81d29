//! Prints `begin`, then makes the core lock up (QEMU: "Lockup", aborts with exit 134).
//!
//! ARMv7-M / ARMv8-M: set FAULTMASK (execution priority -1, the HardFault priority) and execute
//! `udf`: the fault cannot escalate to HardFault, which is architecturally a lockup.
//! ARMv6-M has no FAULTMASK: point MSP at an address where no RAM is and execute `udf`. On
//! QEMU's micro:bit the HardFault frame push itself goes through silently, but the handler's
//! first `push` then faults at HardFault priority, which is a lockup too (QEMU 7.2: "Lockup:
//! can't escalate 3 to HardFault (current priority -1)", exit 134).
#![no_std]
#![no_main]

use mcubench_support::{Session, entry};

#[entry]
fn main() -> ! {
    let _s = Session::begin("lockup");
    #[cfg(not(armv6m))]
    unsafe {
        core::arch::asm!("cpsid f", "udf #0x4c", options(noreturn))
    }
    #[cfg(armv6m)]
    unsafe {
        core::arch::asm!("msr msp, {bad}", "udf #0x4c", bad = in(reg) BAD_SP, options(noreturn))
    }
}

/// No RAM there on the micro:bit (nRF51) memory map.
#[cfg(armv6m)]
const BAD_SP: u32 = 0x3000_0000;
