//! Turns the vector files in `vectors/` (also read by the host) into Rust consts in
//! OUT_DIR/vectors.rs. With feature `wrong-vector`, one expected byte is corrupted on purpose.

use std::{collections::BTreeMap, env, fmt::Write as _, fs, path::PathBuf};

/// The vector whose first expected byte the `wrong-vector` feature flips.
const WRONG_VECTOR: &str = "aes-128/fips197-c1-enc";

fn unhex(v: &str, where_: &str) -> Vec<u8> {
    let (h, n) = match v.split_once('*') {
        Some((h, n)) => (h, n.parse::<usize>().unwrap_or_else(|_| panic!("{where_}: bad repeat {v}"))),
        None => (v, 1),
    };
    assert!(h.len() % 2 == 0, "{where_}: odd hex length");
    let one: Vec<u8> = (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap_or_else(|_| panic!("{where_}: bad hex {v}")))
        .collect();
    one.repeat(n)
}

fn fields<'a>(parts: &[&'a str], names: &[&str], where_: &str) -> Vec<Vec<u8>> {
    let kv: BTreeMap<&str, &str> = parts
        .iter()
        .map(|p| p.split_once('=').unwrap_or_else(|| panic!("{where_}: expected key=value, got {p}")))
        .collect();
    assert_eq!(kv.len(), names.len(), "{where_}: expected fields {names:?}");
    names.iter().map(|n| unhex(kv.get(n).unwrap_or_else(|| panic!("{where_}: missing {n}=")), where_)).collect()
}

fn lines(dir: &PathBuf, name: &str) -> Vec<(String, Vec<String>)> {
    let path = dir.join(name);
    println!("cargo:rerun-if-changed={}", path.display());
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| (format!("{name}:{}", i + 1), l.split(' ').map(str::to_owned).collect()))
        .collect()
}

fn bytes(v: &[u8]) -> String {
    let mut s = String::from("[");
    for b in v {
        write!(s, "{b:#04x},").unwrap();
    }
    s.push(']');
    s
}

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let dir = manifest.join("vectors");
    let wrong = env::var_os("CARGO_FEATURE_WRONG_VECTOR").is_some();
    let mut wrong_done = false;
    let mut out = String::new();
    let mut msgs: Vec<Vec<u8>> = Vec::new();
    let mut hash_entries = String::new();

    let mut maybe_corrupt = |id: &str, v: &mut Vec<u8>| {
        if wrong && id == WRONG_VECTOR {
            v[0] ^= 0x01;
            wrong_done = true;
        }
    };

    for (where_, p) in lines(&dir, "sha3.txt") {
        assert!(p.len() == 4, "{where_}: expected 4 fields");
        let (id, alg) = (&p[0], &p[1]);
        let f = fields(&[&p[2], &p[3]], &["msg", "out"], &where_);
        let (msg, mut exp) = (f[0].clone(), f[1].clone());
        let variant = match alg.as_str() {
            "SHA3-224" => "Sha3_224",
            "SHA3-256" => "Sha3_256",
            "SHA3-384" => "Sha3_384",
            "SHA3-512" => "Sha3_512",
            "SHAKE128" => "Shake128",
            "SHAKE256" => "Shake256",
            _ => panic!("{where_}: unknown alg {alg}"),
        };
        assert!(exp.len() <= 200, "{where_}: output longer than the 200 bytes a record carries");
        maybe_corrupt(id, &mut exp);
        // Identical messages are stored once.
        let m = msgs.iter().position(|x| *x == msg).unwrap_or_else(|| {
            msgs.push(msg.clone());
            msgs.len() - 1
        });
        writeln!(
            hash_entries,
            "    HashVector {{ id: {id:?}, alg: HashAlg::{variant}, msg: &MSG_{m}, expected: &{} }},",
            bytes(&exp)
        )
        .unwrap();
    }
    for (i, m) in msgs.iter().enumerate() {
        writeln!(out, "static MSG_{i}: [u8; {}] = {};", m.len(), bytes(m)).unwrap();
    }
    writeln!(out, "static HASH_VECTORS: &[HashVector] = &[\n{hash_entries}];").unwrap();

    writeln!(out, "static AES_VECTORS: &[AesVector] = &[").unwrap();
    for (where_, p) in lines(&dir, "aes.txt") {
        assert!(p.len() == 6, "{where_}: expected 6 fields");
        let (id, alg, op) = (&p[0], &p[1], &p[2]);
        let f = fields(&[&p[3], &p[4], &p[5]], &["key", "in", "out"], &where_);
        let (key, input, mut exp) = (f[0].clone(), f[1].clone(), f[2].clone());
        assert_eq!(format!("AES-{}", key.len() * 8), *alg, "{where_}: key length does not match {alg}");
        assert!(input.len() == 16 && exp.len() == 16, "{where_}: AES block is 16 bytes");
        let decrypt = match op.as_str() {
            "encrypt" => false,
            "decrypt" => true,
            _ => panic!("{where_}: unknown op {op}"),
        };
        maybe_corrupt(id, &mut exp);
        writeln!(
            out,
            "    AesVector {{ id: {id:?}, alg: {alg:?}, decrypt: {decrypt}, key: &{}, input: {}, expected: {} }},",
            bytes(&key),
            bytes(&input),
            bytes(&exp)
        )
        .unwrap();
    }
    writeln!(out, "];").unwrap();
    assert!(!wrong || wrong_done, "wrong-vector: vector {WRONG_VECTOR} not found");

    let dest = PathBuf::from(env::var("OUT_DIR").unwrap()).join("vectors.rs");
    fs::write(dest, out).unwrap();
    println!("cargo:rerun-if-changed=build.rs");
}
