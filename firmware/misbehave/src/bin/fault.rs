//! Prints `begin`, then executes a permanently undefined instruction (`udf`). The UsageFault
//! escalates to HardFault (UsageFault is not enabled; ARMv6-M has only HardFault), whose
//! handler writes the `fault` record with the PC of the `udf` and exits with failure.
#![no_std]
#![no_main]

use mcubench_support::{Session, entry};

#[entry]
fn main() -> ! {
    let _s = Session::begin("fault");
    unsafe { core::arch::asm!("udf #0x42", options(noreturn)) }
}
