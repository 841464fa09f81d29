//! Decode throughput: decodes the code of every function symbol of an ELF repeatedly, once with
//! `decode_block` and once instruction by instruction with `decode`, and prints instructions/second.
//! Usage: cargo run --release -p mcubench-thumb --example throughput -- ELF v6m|v7m|v7em|v8m [fpu]
#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use mcubench_thumb::{Arch, Decoder, insn_len};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: throughput ELF ARCH [fpu]");
    let arch: Arch = args.next().as_deref().unwrap_or("v7em").parse().unwrap_or_else(|e| panic!("{e}"));
    let fpu = args.next().as_deref() == Some("fpu");
    let dec = Decoder::new(arch, fpu).expect("decoder");
    let regions = common::code_regions(&std::fs::read(&path).expect("read ELF"));
    let budget = Duration::from_secs(2);

    let (mut n, start) = (0u64, Instant::now());
    while start.elapsed() < budget {
        for r in &regions {
            n += dec.decode_block(r.addr, &r.bytes).0.len() as u64;
        }
    }
    let s = start.elapsed().as_secs_f64();
    println!("decode_block: {n} instructions in {s:.2} s = {:.0} insn/s", n as f64 / s);

    let (mut n, start) = (0u64, Instant::now());
    while start.elapsed() < budget {
        for r in &regions {
            let mut off = 0;
            while off + 2 <= r.bytes.len() {
                let hw = u16::from_le_bytes([r.bytes[off], r.bytes[off + 1]]);
                let _ = std::hint::black_box(dec.decode(r.addr + off as u32, &r.bytes[off..]));
                off += insn_len(hw) as usize;
                n += 1;
            }
        }
    }
    let s = start.elapsed().as_secs_f64();
    println!("decode:       {n} instructions in {s:.2} s = {:.0} insn/s", n as f64 / s);
}
