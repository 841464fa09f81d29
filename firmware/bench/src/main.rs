//! A long workload for benchmarking the host (QEMU with and without the mcubench plugin), not a
//! test of the firmware: SHA3-256 chained `BENCH_ITERATIONS` times (a build-time environment
//! variable, default 40 000: about 1.3e9 instructions on a Cortex-M4 build at opt-level 3), measured
//! as one operation.
//!
//! Records: `sha3-256/empty` is a known-answer test (SHA3-256 of the empty message, FIPS 202).
//! `bench/sha3-256-chain` (`h = SHA3-256(h)` from 32 zero bytes) is checked against a value
//! computed independently (Python's hashlib) for the default iteration count only; for any other
//! count its `expected` is its own output, so it cannot fail.

#![no_std]
#![no_main]

use core::hint::black_box;
use mcubench_support::{Session, entry, measure};
use sha3::{Digest, Sha3_256};

const ITERATIONS: u32 = match option_env!("BENCH_ITERATIONS") {
    Some(s) => parse(s),
    None => 40_000,
};

const fn parse(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut i = 0;
    let mut n: u32 = 0;
    while i < b.len() {
        assert!(b[i].is_ascii_digit(), "BENCH_ITERATIONS must be a decimal number");
        n = n * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    n
}

const SHA3_256_EMPTY: [u8; 32] = [
    0xa7, 0xff, 0xc6, 0xf8, 0xbf, 0x1e, 0xd7, 0x66, 0x51, 0xc1, 0x47, 0x56, 0xa0, 0x61, 0xd6, 0x62, 0xf5, 0x80, 0xff,
    0x4d, 0xe4, 0x3b, 0x49, 0xfa, 0x82, 0xd8, 0x0a, 0x4b, 0x80, 0xf8, 0x43, 0x4a,
];

/// The chain's value after the default 40 000 iterations.
const CHAIN_40000: [u8; 32] = [
    0xca, 0xe4, 0x02, 0xe1, 0x78, 0xc3, 0x06, 0xea, 0x4f, 0xa5, 0x13, 0x8e, 0x73, 0xf9, 0xf5, 0xff, 0x8e, 0xbb, 0xd2,
    0x80, 0xbf, 0x01, 0xc3, 0x1a, 0x77, 0x99, 0xd3, 0xbe, 0x8d, 0x4c, 0xf8, 0x1f,
];

#[entry]
fn main() -> ! {
    let mut s = Session::begin("bench");
    let mut out = [0u8; 32];
    let m = measure(|| out.copy_from_slice(&Sha3_256::digest(black_box(&[][..]))));
    s.kat("sha3-256/empty", "SHA3-256", "hash", &out, &SHA3_256_EMPTY, m);

    let mut chain = [0u8; 32];
    let m = measure(|| {
        for _ in 0..black_box(ITERATIONS) {
            let next = Sha3_256::digest(chain);
            chain.copy_from_slice(&next);
        }
    });
    let expected = if ITERATIONS == 40_000 { CHAIN_40000 } else { chain };
    s.kat("bench/sha3-256-chain", "SHA3-256", "hash", &chain, &expected, m);
    s.end()
}
