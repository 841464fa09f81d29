//! Run the objdump differential check over any Thumb ELF by hand.
//! Usage: cargo run -p mcubench-thumb --example elfcheck -- ELF v6m|v7m|v7em|v8m [fpu]
#[path = "../tests/common/mod.rs"]
mod common;

use mcubench_thumb::{Arch, Decoder};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: elfcheck ELF ARCH [fpu]");
    let arch: Arch = args.next().as_deref().unwrap_or("v7em").parse().unwrap_or_else(|e| panic!("{e}"));
    let fpu = args.next().as_deref() == Some("fpu");
    let dec = Decoder::new(arch, fpu).expect("decoder");
    let rep = common::compare(&dec, std::path::Path::new(&path));
    for m in rep.mismatches.iter().take(30) {
        println!("mismatch: {m}");
    }
    for e in rep.errors.iter().take(30) {
        println!("error: {e}");
    }
    println!(
        "{path}: {} instructions, {} direct branches/calls, {} mismatches, {} decode errors",
        rep.insns,
        rep.branches,
        rep.mismatches.len(),
        rep.errors.len()
    );
}
