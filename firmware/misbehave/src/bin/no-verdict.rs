//! Prints `begin` and one passing `kat` record, then exits with success WITHOUT an `end`
//! record: exit 0 alone is not a verdict, the host must report no-verdict.
#![no_std]
#![no_main]

use core::hint::black_box;
use mcubench_support::{Session, entry, exit_success, measure};

#[entry]
fn main() -> ! {
    let mut s = Session::begin("no-verdict");
    let mut out = [0u8; 4];
    let m = measure(|| out = black_box(0x0102_0304u32).to_be_bytes());
    s.kat("no-verdict/copy", "COPY", "hash", &out, &[1, 2, 3, 4], m);
    exit_success()
}
