//! Prints `begin`, then spins forever: the host must time out.
#![no_std]
#![no_main]

use mcubench_support::{Session, entry};

#[entry]
fn main() -> ! {
    let _s = Session::begin("hang");
    loop {
        cortex_m::asm::nop();
    }
}
