//! Known-answer tests for SHA3-224/256/384/512, SHAKE128/256 and AES-128/192/256 (encrypt and
//! decrypt), reported through the mcubench result protocol. The vectors come from
//! `vectors/*.txt` (see build.rs); each operation is measured (ticks, stack) on its own.

#![no_std]
#![no_main]

use aes::cipher::{Array, BlockCipherDecrypt, BlockCipherEncrypt, BlockSizeUser, KeyInit, consts::U16};
use core::hint::black_box;
use mcubench_support::{Measurement, Session, entry, measure};
use sha3::Digest;
use shake::{ExtendableOutput, Update};

#[derive(Clone, Copy)]
#[allow(non_camel_case_types)]
enum HashAlg {
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    Shake128,
    Shake256,
}

impl HashAlg {
    fn name(self) -> &'static str {
        match self {
            HashAlg::Sha3_224 => "SHA3-224",
            HashAlg::Sha3_256 => "SHA3-256",
            HashAlg::Sha3_384 => "SHA3-384",
            HashAlg::Sha3_512 => "SHA3-512",
            HashAlg::Shake128 => "SHAKE128",
            HashAlg::Shake256 => "SHAKE256",
        }
    }

    fn op(self) -> &'static str {
        match self {
            HashAlg::Shake128 | HashAlg::Shake256 => "xof",
            _ => "hash",
        }
    }
}

struct HashVector {
    id: &'static str,
    alg: HashAlg,
    msg: &'static [u8],
    expected: &'static [u8],
}

struct AesVector {
    id: &'static str,
    alg: &'static str,
    decrypt: bool,
    key: &'static [u8],
    input: [u8; 16],
    expected: [u8; 16],
}

include!(concat!(env!("OUT_DIR"), "/vectors.rs"));

fn digest<D: Digest>(msg: &[u8], out: &mut [u8]) {
    out.copy_from_slice(&D::digest(msg));
}

fn xof<X: Default + Update + ExtendableOutput>(msg: &[u8], out: &mut [u8]) {
    let mut x = X::default();
    x.update(msg);
    x.finalize_xof_into(out);
}

/// Each algorithm gets its own closure, so each is measured through its own call frame.
fn run_hash(v: &HashVector, out: &mut [u8]) -> Measurement {
    let msg = black_box(v.msg);
    match v.alg {
        HashAlg::Sha3_224 => measure(|| digest::<sha3::Sha3_224>(msg, out)),
        HashAlg::Sha3_256 => measure(|| digest::<sha3::Sha3_256>(msg, out)),
        HashAlg::Sha3_384 => measure(|| digest::<sha3::Sha3_384>(msg, out)),
        HashAlg::Sha3_512 => measure(|| digest::<sha3::Sha3_512>(msg, out)),
        HashAlg::Shake128 => measure(|| xof::<shake::Shake128>(msg, out)),
        HashAlg::Shake256 => measure(|| xof::<shake::Shake256>(msg, out)),
    }
}

/// Key expansion plus one block, in the vector's direction.
fn block<C: KeyInit + BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U16>>(
    key: &[u8],
    decrypt: bool,
    input: &[u8; 16],
    out: &mut [u8; 16],
) {
    let Ok(cipher) = C::new_from_slice(key) else { panic!("AES key length") };
    let mut b = Array::from(*input);
    if decrypt {
        cipher.decrypt_block(&mut b);
    } else {
        cipher.encrypt_block(&mut b);
    }
    out.copy_from_slice(&b);
}

fn run_aes(v: &AesVector, out: &mut [u8; 16]) -> Measurement {
    let (key, input) = (black_box(v.key), black_box(&v.input));
    match (key.len(), v.decrypt) {
        (16, false) => measure(|| block::<aes::Aes128>(key, false, input, out)),
        (16, true) => measure(|| block::<aes::Aes128>(key, true, input, out)),
        (24, false) => measure(|| block::<aes::Aes192>(key, false, input, out)),
        (24, true) => measure(|| block::<aes::Aes192>(key, true, input, out)),
        (32, false) => measure(|| block::<aes::Aes256>(key, false, input, out)),
        (32, true) => measure(|| block::<aes::Aes256>(key, true, input, out)),
        _ => panic!("AES key length"),
    }
}

#[entry]
fn main() -> ! {
    let mut s = Session::begin("kat");
    for v in HASH_VECTORS {
        let mut buf = [0u8; mcubench_support::MAX_OUT];
        let out = &mut buf[..v.expected.len()];
        let m = run_hash(v, out);
        s.kat(v.id, v.alg.name(), v.alg.op(), out, v.expected, m);
    }
    for v in AES_VECTORS {
        let mut out = [0u8; 16];
        let m = run_aes(v, &mut out);
        let op = if v.decrypt { "decrypt" } else { "encrypt" };
        s.kat(v.id, v.alg, op, &out, &v.expected, m);
    }
    s.end()
}
