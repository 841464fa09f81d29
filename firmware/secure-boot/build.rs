//! The host side of the secure-boot firmware: makes the 100 KiB image, the keys (from fixed
//! seeds), the signatures and the image headers at build time, and writes them as Rust statics
//! to OUT_DIR/signed.rs. Nothing here is random: the same source gives the same ELF.
//!
//! Signature schemes sign the image's SHA-256 digest (hash-then-sign, as secure bootloaders
//! do); the verifier recomputes the digest from the image and verifies the signature over it.

use std::{env, fmt::Write as _, fs, path::PathBuf};

use ed25519_dalek::Signer as _;
use ml_dsa::{ExpandedSigningKey, MlDsa44, MlDsa65, MlDsa87, MlDsaParams};
use p256::ecdsa::signature::hazmat::PrehashSigner;
use sha2::Digest as _;

/// The image size every row of the table verifies.
const IMAGE_LEN: usize = 100 * 1024;
const MAGIC: &[u8; 4] = b"MCBH";

fn bytes(v: &[u8]) -> String {
    let mut s = String::with_capacity(v.len() * 5 + 2);
    s.push('[');
    for b in v {
        write!(s, "{b:#04x},").unwrap();
    }
    s.push(']');
    s
}

/// A fixed 32-byte seed per key: SHA-256 of a label.
fn seed(label: &str) -> [u8; 32] {
    sha2::Sha256::digest(format!("mcubench secure-boot seed: {label}").as_bytes()).into()
}

/// The fixed header fields: magic, header version, image length, algorithm id (little endian).
fn fixed(alg_id: u32) -> Vec<u8> {
    let mut h = MAGIC.to_vec();
    h.extend(1u32.to_le_bytes());
    h.extend((IMAGE_LEN as u32).to_le_bytes());
    h.extend(alg_id.to_le_bytes());
    h
}

fn emit(out: &mut String, name: &str, v: &[u8]) {
    // `#[used]` + no_mangle: the statics keep their names and sizes in the ELF, where the host
    // reads the header and signature sizes (symbol `sb_hdr_<alg>`, `sb_sig_<alg>`, `sb_key_<alg>`).
    writeln!(out, "#[unsafe(no_mangle)]\n#[used]\npub static {name}: [u8; {}] = {};", v.len(), bytes(v)).unwrap();
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn ml_dsa<P: MlDsaParams>(out: &mut String, alg: &str, id: u32, digest: &[u8]) {
    let sk = ExpandedSigningKey::<P>::from_seed(&seed(alg).into());
    let sig = sk.sign_deterministic(digest, &[]).expect("ML-DSA sign");
    let key = sk.verifying_key().encode();
    let mut hdr = fixed(id);
    hdr.extend(sha2::Sha256::digest(&key)); // key hint: which key signed
    emit(out, &format!("sb_hdr_{alg}"), &hdr);
    emit(out, &format!("sb_sig_{alg}"), &sig.encode());
    emit(out, &format!("sb_key_{alg}"), &key);
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let mut out = String::new();

    // The image: SHA-256 in counter mode over a fixed label (deterministic, incompressible).
    let image: Vec<u8> = (0..IMAGE_LEN / 32)
        .flat_map(|i: usize| sha2::Sha256::digest(format!("mcubench secure-boot image block {i}").as_bytes()))
        .collect();
    writeln!(out, "pub const IMAGE_LEN: usize = {IMAGE_LEN};").unwrap();
    emit(&mut out, "sb_image", &image);

    // Hash-only rows: the header carries the digest, the boot path compares it.
    let sha256: [u8; 32] = sha2::Sha256::digest(&image).into();
    let sha384 = sha2::Sha384::digest(&image);
    let sha3_256 = sha3::Sha3_256::digest(&image);
    for (alg, id, d) in [("sha256", 1u32, &sha256[..]), ("sha384", 2, &sha384[..]), ("sha3_256", 3, &sha3_256[..])] {
        let mut hdr = fixed(id);
        hdr.extend(d);
        emit(&mut out, &format!("sb_hdr_{alg}"), &hdr);
    }
    emit(&mut out, "SHA256_DIGEST", &sha256);
    emit(&mut out, "SHA384_DIGEST", &sha384);

    // ECDSA P-256 over the SHA-256 digest (RFC 6979 deterministic nonces).
    {
        let sk = p256::ecdsa::SigningKey::from_bytes(&seed("ecdsa_p256").into()).expect("P-256 key");
        let sig: p256::ecdsa::Signature = sk.sign_prehash(&sha256).expect("P-256 sign");
        let key = sk.verifying_key().to_sec1_point(false);
        let mut hdr = fixed(4);
        hdr.extend(sha2::Sha256::digest(key.as_bytes()));
        emit(&mut out, "sb_hdr_ecdsa_p256", &hdr);
        emit(&mut out, "sb_sig_ecdsa_p256", &sig.to_bytes());
        emit(&mut out, "sb_key_ecdsa_p256", key.as_bytes());
    }
    // ECDSA P-384 over the SHA-384 digest (RFC 6979 deterministic nonces); a 48-byte seed.
    {
        let seed384 = sha2::Sha384::digest(b"mcubench secure-boot seed: ecdsa_p384");
        let sk = p384::ecdsa::SigningKey::from_slice(&seed384).expect("P-384 key");
        let sig: p384::ecdsa::Signature = sk.sign_prehash(&sha384).expect("P-384 sign");
        let key = sk.verifying_key().to_sec1_point(false);
        let mut hdr = fixed(9);
        hdr.extend(sha2::Sha256::digest(key.as_bytes()));
        emit(&mut out, "sb_hdr_ecdsa_p384", &hdr);
        emit(&mut out, "sb_sig_ecdsa_p384", &sig.to_bytes());
        emit(&mut out, "sb_key_ecdsa_p384", key.as_bytes());
    }
    // Ed25519 (PureEdDSA) over the SHA-256 digest.
    {
        let sk = ed25519_dalek::SigningKey::from_bytes(&seed("ed25519"));
        let sig = sk.sign(&sha256);
        let key = sk.verifying_key().to_bytes();
        let mut hdr = fixed(5);
        hdr.extend(sha2::Sha256::digest(key));
        emit(&mut out, "sb_hdr_ed25519", &hdr);
        emit(&mut out, "sb_sig_ed25519", &sig.to_bytes());
        emit(&mut out, "sb_key_ed25519", &key);
    }
    ml_dsa::<MlDsa44>(&mut out, "ml_dsa_44", 6, &sha256);
    ml_dsa::<MlDsa65>(&mut out, "ml_dsa_65", 7, &sha256);
    ml_dsa::<MlDsa87>(&mut out, "ml_dsa_87", 8, &sha256);

    // Official vectors, checked here against the host implementation so a typo fails the build.
    // RFC 8032 section 7.1, TEST 1 (empty message).
    let rfc8032_sk = hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
    let rfc8032_pk = hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
    let rfc8032_sig = hex(
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    );
    let sk = ed25519_dalek::SigningKey::from_bytes(&rfc8032_sk.clone().try_into().unwrap());
    assert_eq!(sk.verifying_key().to_bytes().to_vec(), rfc8032_pk, "RFC 8032 test 1 public key");
    assert_eq!(sk.sign(b"").to_bytes().to_vec(), rfc8032_sig, "RFC 8032 test 1 signature");
    emit(&mut out, "RFC8032_T1_KEY", &rfc8032_pk);
    emit(&mut out, "RFC8032_T1_SIG", &rfc8032_sig);
    // NIST CAVP FIPS 186-4 ECDSA SigGen.txt, [P-256,SHA-256], first vector (message hash, Q, R, S),
    // as carried by RustCrypto's p256 crate (src/test_vectors/ecdsa.rs).
    let q = [
        &[0x04][..],
        &hex("1ccbe91c075fc7f4f033bfa248db8fccd3565de94bbfb12f3c59ff46c271bf83"),
        &hex("ce4014c68811f9a21a1fdb2c0e6113e06db7ca93b7404e78dc7ccd5ca89a4ca9"),
    ]
    .concat();
    let m = hex("44acf6b7e36c1342c2c5897204fe09504e1e2efb1a900377dbc4e7a6a133ec56");
    let rs = [
        hex("f3ac8061b514795b8843e3d6629527ed2afd6b1f6a555a7acabb5e6f79c8c2ac"),
        hex("8bf77819ca05a6b2786c76262bf7371cef97b218e96f175a3ccdda2acc058903"),
    ]
    .concat();
    {
        use p256::ecdsa::signature::hazmat::PrehashVerifier;
        let vk = p256::ecdsa::VerifyingKey::from_sec1_bytes(&q).expect("CAVP Q");
        let sig = p256::ecdsa::Signature::from_slice(&rs).expect("CAVP R,S");
        vk.verify_prehash(&m, &sig).expect("CAVP P-256 vector verifies on the host");
    }
    emit(&mut out, "CAVP_P256_Q", &q);
    emit(&mut out, "CAVP_P256_M", &m);
    emit(&mut out, "CAVP_P256_RS", &rs);
    // The same for [P-384,SHA-384], first vector (p384 crate, src/test_vectors/ecdsa.rs).
    let q384 = [
        &[0x04][..],
        &hex("c2b47944fb5de342d03285880177ca5f7d0f2fcad7678cce4229d6e1932fcac11bfc3c3e97d942a3c56bf34123013dbf"),
        &hex("37257906a8223866eda0743c519616a76a758ae58aee81c5fd35fbf3a855b7754a36d4a0672df95d6c44a81cf7620c2d"),
    ]
    .concat();
    let m384 = hex("31a452d6164d904bb5724c878280231eae705c29ce9d4bc7d58e020e1085f17eebcc1a38f0ed0bf2b344d81fbd896825");
    let rs384 = [
        hex("50835a9251bad008106177ef004b091a1e4235cd0da84fff54542b0ed755c1d6f251609d14ecf18f9e1ddfe69b946e32"),
        hex("0475f3d30c6463b646e8d3bf2455830314611cbde404be518b14464fdb195fdcc92eb222e61f426a4a592c00a6a89721"),
    ]
    .concat();
    {
        use p384::ecdsa::signature::hazmat::PrehashVerifier;
        let vk = p384::ecdsa::VerifyingKey::from_sec1_bytes(&q384).expect("CAVP P-384 Q");
        let sig = p384::ecdsa::Signature::from_slice(&rs384).expect("CAVP P-384 R,S");
        vk.verify_prehash(&m384, &sig).expect("CAVP P-384 vector verifies on the host");
    }
    emit(&mut out, "CAVP_P384_Q", &q384);
    emit(&mut out, "CAVP_P384_M", &m384);
    emit(&mut out, "CAVP_P384_RS", &rs384);
    // FIPS 180-4 / FIPS 202 examples: "abc".
    for (name, want, got) in [
        (
            "SHA256_ABC",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            sha2::Sha256::digest(b"abc").to_vec(),
        ),
        (
            "SHA384_ABC",
            "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7",
            sha2::Sha384::digest(b"abc").to_vec(),
        ),
        (
            "SHA3_256_ABC",
            "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532",
            sha3::Sha3_256::digest(b"abc").to_vec(),
        ),
    ] {
        assert_eq!(hex(want), got, "{name}");
        emit(&mut out, name, &hex(want));
    }

    fs::write(PathBuf::from(env::var("OUT_DIR").unwrap()).join("signed.rs"), out).unwrap();
}
