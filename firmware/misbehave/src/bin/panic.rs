//! Prints `begin`, then panics: the panic handler writes the `panic` record and exits with
//! failure (QEMU exit 1).
#![no_std]
#![no_main]

use mcubench_support::{Session, entry};

#[entry]
fn main() -> ! {
    let _s = Session::begin("panic");
    let n = core::hint::black_box(3u32);
    panic!("deliberate panic, n={n}");
}
