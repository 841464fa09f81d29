//! Prints `begin`, then makes the core lock up (QEMU: "Lockup", aborts with exit 134).
//!
//! ARMv7-M / ARMv8-M: set FAULTMASK (execution priority -1, the HardFault priority) and execute
//! `udf`: the fault cannot escalate to HardFault, which is architecturally a lockup.
//! ARMv6-M has no FAULTMASK: point MSP at an address nothing answers at and execute `udf`;
//! stacking the HardFault frame then faults inside HardFault entry, which is a lockup too.
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

/// Unmapped on the micro:bit (nRF51) memory map.
#[cfg(armv6m)]
const BAD_SP: u32 = 0x3000_0000;
