//! The ML-DSA KATs' NIST ACVP vectors (features `ml-dsa` / `fips204`): `key=hex` text files
//! (`#` comments name each vector's source) written as statics to OUT_DIR/ml_dsa_vectors.rs.
//! keyGen and sigGen cases are in `vectors/acvp-ml-dsa-<set>.txt`; the sigVer case is the one
//! the secure-boot firmware verifies (`../secure-boot/vectors/acvp-ml-dsa-<set>-sigver.txt`).

use std::{collections::BTreeMap, env, fmt::Write as _, fs, path::Path};

fn data(path: &Path) -> BTreeMap<String, String> {
    println!("cargo:rerun-if-changed={}", path.display());
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap_or_else(|| panic!("{}: `key=hex` expected, got {l:?}", path.display()));
            assert!(v.len() % 2 == 0 && v.bytes().all(|b| b.is_ascii_hexdigit()), "{}: `{k}` is not hex", path.display());
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn bytes(hex: &str) -> String {
    let mut s = String::from("[");
    for i in (0..hex.len()).step_by(2) {
        write!(s, "0x{},", &hex[i..i + 2]).unwrap();
    }
    s.push(']');
    s
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let dir = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap()).to_path_buf();
    let mut out = String::new();
    for set in ["44", "65", "87"] {
        let v = data(&dir.join(format!("vectors/acvp-ml-dsa-{set}.txt")));
        let ver = data(&dir.join(format!("../secure-boot/vectors/acvp-ml-dsa-{set}-sigver.txt")));
        writeln!(
            out,
            "#[allow(dead_code)]\nstatic ML_DSA_{set}: Vectors = Vectors {{ seed: &{}, pk: &{}, sk: &{}, sign_msg: &{}, \
             sig: &{}, verify_pk: &{}, verify_msg: &{}, verify_sig: &{} }};",
            bytes(&v["seed"]),
            bytes(&v["pk"]),
            bytes(&v["sk"]),
            bytes(&v["message"]),
            bytes(&v["signature"]),
            bytes(&ver["pk"]),
            bytes(&ver["message"]),
            bytes(&ver["signature"]),
        )
        .unwrap();
    }
    fs::write(Path::new(&env::var("OUT_DIR").unwrap()).join("ml_dsa_vectors.rs"), out).unwrap();
}
