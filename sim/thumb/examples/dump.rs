//! Decode a raw Thumb binary (e.g. `arm-none-eabi-objcopy -O binary`) and print every instruction.
//! Usage: cargo run -p mcubench-thumb --example dump -- FILE [v6m|v7m|v7em|v8m] [fpu] [base-hex]
use mcubench_thumb::{Arch, Decoder};

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: dump FILE [arch] [fpu] [base]");
    let arch: Arch = args.next().as_deref().unwrap_or("v7em").parse().unwrap_or_else(|e| panic!("{e}"));
    let fpu = args.next().as_deref() == Some("fpu");
    let base = args.next().map(|s| u32::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex base")).unwrap_or(0);
    let code = std::fs::read(path).expect("read");
    let dec = Decoder::new(arch, fpu).expect("decoder");
    let (insns, err) = dec.decode_block(base, &code);
    for i in &insns {
        println!(
            "{:08x} {:08x} {:<10} {:<28} {:?} cond={} sp={:?} copy={:?} flow={:?} mem={:?} r={:04x} w={:04x}",
            i.addr,
            i.raw,
            i.mnemonic,
            i.operands,
            i.class,
            i.conditional,
            i.sp,
            i.sp_copy,
            i.flow,
            i.mem,
            i.reads.0,
            i.writes.0
        );
    }
    if let Some(e) = err {
        println!("error: {e}");
    }
}
