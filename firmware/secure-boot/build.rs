//! The host side of the secure-boot firmware: makes the 100 KiB image, the keys (from fixed
//! seeds), the signatures and the image headers at build time, and writes them as Rust statics
//! to OUT_DIR/signed.rs. Nothing here is random: the same source gives the same ELF.
//!
//! Signature schemes sign the image's SHA-256 digest (hash-then-sign, as secure bootloaders
//! do); the verifier recomputes the digest from the image and verifies the signature over it.

use std::{env, fmt::Write as _, fs, path::Path, path::PathBuf};

use ed25519_dalek::Signer as _;
use ml_dsa::{ExpandedSigningKey, MlDsa44, MlDsa65, MlDsa87, MlDsaParams};
use p256::ecdsa::signature::hazmat::PrehashSigner;
use sha2::Digest as _;
use slh_dsa::signature::Keypair as _;

// LMS and XMSS: their keys, signatures and official vectors.
#[path = "build/hbs.rs"]
mod hbs;

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

/// `key=hex` lines of a data file under this crate (comments: `#`), by key.
fn data(path: &str) -> std::collections::BTreeMap<String, Vec<u8>> {
    let full = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap()).join(path);
    println!("cargo:rerun-if-changed={}", full.display());
    let text = fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap_or_else(|| panic!("{path}: `key=hex` expected, got {l:?}"));
            let v = if v.len() % 2 == 1 { format!("0{v}") } else { v.to_string() };
            (k.to_string(), hex(&v))
        })
        .collect()
}

/// ECDSA P-521 over `digest` (SHA-512; RFC 6979 nonces): signature r||s, SEC1 uncompressed key.
fn p521_sign(label: &str, digest: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let seed = sha2::Sha512::digest(format!("mcubench secure-boot seed: {label}").as_bytes());
    let sk = p521::ecdsa::SigningKey::from_slice(&seed).expect("P-521 key");
    let sig: p521::ecdsa::Signature = sk.sign_prehash(digest).expect("P-521 sign");
    (sig.to_bytes().to_vec(), p521::ecdsa::VerifyingKey::from(&sk).to_sec1_point(false).as_bytes().to_vec())
}

/// ECDSA P-384 over `digest` (RFC 6979 nonces), key from a 48-byte seed.
fn p384_sign(label: &str, digest: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let seed = sha2::Sha384::digest(format!("mcubench secure-boot seed: {label}").as_bytes());
    let sk = p384::ecdsa::SigningKey::from_slice(&seed).expect("P-384 key");
    let sig: p384::ecdsa::Signature = sk.sign_prehash(digest).expect("P-384 sign");
    (sig.to_bytes().to_vec(), sk.verifying_key().to_sec1_point(false).as_bytes().to_vec())
}

/// ML-DSA over `digest`, empty context, deterministic: (signature, encoded public key).
fn ml_dsa_sign<P: MlDsaParams>(label: &str, digest: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let sk = ExpandedSigningKey::<P>::from_seed(&seed(label).into());
    let sig = sk.sign_deterministic(digest, &[]).expect("ML-DSA sign");
    (sig.encode().to_vec(), sk.verifying_key().encode().to_vec())
}

/// A signature row's statics: header (fixed fields + key hint), signature, public key.
fn emit_signed(out: &mut String, alg: &str, id: u32, sig: &[u8], key: &[u8]) {
    let mut hdr = fixed(id);
    hdr.extend(sha2::Sha256::digest(key)); // key hint: which key signed
    emit(out, &format!("sb_hdr_{alg}"), &hdr);
    emit(out, &format!("sb_sig_{alg}"), sig);
    emit(out, &format!("sb_key_{alg}"), key);
}

/// RSA PKCS#1 v1.5 with SHA-256 over `digest`, key rebuilt from the committed primes
/// (keys/rsa-<bits>.txt). Public key: modulus (big endian, k bytes) then e (4 bytes).
fn rsa_sign(bits: usize, digest: &[u8]) -> (Vec<u8>, Vec<u8>) {
    use rsa::BoxedUint;
    let d = data(&format!("keys/rsa-{bits}.txt"));
    let int = |k: &str| BoxedUint::from_be_slice_vartime(&d[k]);
    let sk = rsa::PrivateKey::from_p_q(int("p"), int("q"), int("e")).expect("RSA key from p, q, e");
    let sig = sk.sign(rsa::Pkcs1v15Sign::new::<sha2::Sha256>(), digest).expect("RSA sign");
    let pk = sk.to_public_key();
    use rsa::traits::PublicKeyParts as _;
    let mut key = pk.n().to_be_bytes_trimmed_vartime().to_vec();
    assert_eq!(key.len() * 8, bits, "RSA-{bits} modulus size");
    let e = pk.e().to_be_bytes_trimmed_vartime();
    key.extend(std::iter::repeat_n(0u8, 4 - e.len()).chain(e.iter().copied()));
    pk.verify(rsa::Pkcs1v15Sign::new::<sha2::Sha256>(), digest, &sig).expect("RSA verifies on the host");
    (sig, key)
}

/// An ACVP ML-DSA sigVer case (pk, message, signature) through ML-DSA.Verify_internal.
fn acvp_ml_dsa<P: MlDsaParams>(v: &std::collections::BTreeMap<String, Vec<u8>>) -> bool {
    let (Ok(pk), Ok(sig)) = (
        ml_dsa::EncodedVerifyingKey::<P>::try_from(&v["pk"][..]),
        ml_dsa::EncodedSignature::<P>::try_from(&v["signature"][..]),
    ) else {
        return false;
    };
    ml_dsa::Signature::<P>::decode(&sig)
        .is_some_and(|sig| ml_dsa::VerifyingKey::<P>::decode(&pk).verify_internal(&v["message"], &sig))
}

/// Where `bash ci/setup.sh` unpacks wolfSSL 5.7.2's Thumb-2 assembly (MCUBENCH_THIRD_PARTY_SRC,
/// default `<repository>/target/third-party/src`, as for Mbed TLS).
fn wolfssl_tree() -> PathBuf {
    println!("cargo:rerun-if-env-changed=MCUBENCH_THIRD_PARTY_SRC");
    let root = env::var_os("MCUBENCH_THIRD_PARTY_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../target/third-party/src"));
    root.join("wolfssl-5.7.2")
}

/// The `*_asm` rows' hash cores: wolfSSL's hand-written Thumb-2 assembly (GPL-2.0-or-later;
/// `Transform_Sha256_Len`, `Transform_Sha512_Len`, `BlockSha3`), compiled unmodified with
/// arm-none-eabi-gcc and linked into this firmware, which is never distributed. Sets
/// `cfg(wolfssl_asm)` when built; without the source the rows are still there, and their first
/// KAT panics with what to install (src/asm.rs), so they fail instead of disappearing.
fn wolfssl_asm() {
    let tree = wolfssl_tree();
    let sources: Vec<PathBuf> = ["sha256", "sha512", "sha3"]
        .iter()
        .map(|h| tree.join(format!("wolfcrypt/src/port/arm/thumb2-{h}-asm.S")))
        .collect();
    // A file that appears later, newer than this script's last run, reruns it, so the rows come
    // back once it is there (ci/setup.sh unpacks it with the time of unpacking, not the tarball's).
    for s in &sources {
        println!("cargo:rerun-if-changed={}", s.display());
    }
    if !sources.iter().all(|s| s.is_file()) {
        println!(
            "cargo:warning=wolfSSL 5.7.2's Thumb-2 assembly is not in {}: the sha256_asm, sha384_asm and sha3_256_asm \
             rows will fail (run `bash ci/setup.sh`, or set MCUBENCH_THIRD_PARTY_SRC)",
            tree.display()
        );
        return;
    }
    let mut build = cc::Build::new();
    // cc picks arm-none-eabi-gcc for the thumb targets (CC_<target> overrides it).
    build
        .include(&tree)
        // The .S files' own switches: ARM assembly without NEON (Cortex-M has none), SHA-512 and
        // SHA-3 enabled. WC_NO_HARDEN only silences settings.h's warning about the public-key
        // options, which these files do not use.
        .define("WOLFSSL_ARMASM", None)
        .define("WOLFSSL_ARMASM_NO_NEON", None)
        .define("WOLFSSL_SHA512", None)
        .define("WOLFSSL_SHA3", None)
        .define("WC_NO_HARDEN", None)
        .warnings_into_errors(true);
    build.files(&sources);
    build.compile("wolfssl_thumb2");
    println!("cargo:rustc-cfg=wolfssl_asm");
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(wolfssl_asm)");
    if env::var("TARGET").is_ok_and(|t| t.starts_with("thumb")) {
        wolfssl_asm();
    }
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
    // The same rows hashed by wolfSSL's Thumb-2 assembly: their own headers (algorithm ids 101 to
    // 103, apart from the signature schemes') over the same digests.
    for (alg, id, d) in
        [("sha256_asm", 101u32, &sha256[..]), ("sha384_asm", 102, &sha384[..]), ("sha3_256_asm", 103, &sha3_256[..])]
    {
        let mut hdr = fixed(id);
        hdr.extend(d);
        emit(&mut out, &format!("sb_hdr_{alg}"), &hdr);
    }
    emit(&mut out, "SHA256_DIGEST", &sha256);
    emit(&mut out, "SHA384_DIGEST", &sha384);
    let sha512 = sha2::Sha512::digest(&image);
    emit(&mut out, "SHA512_DIGEST", &sha512);

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

    // ECDSA P-521 over the SHA-512 digest.
    let (sig, key) = p521_sign("ecdsa_p521", &sha512);
    emit_signed(&mut out, "ecdsa_p521", 10, &sig, &key);
    // Ed448 (RFC 8032 PureEdDSA, empty context) over the SHA-512 digest; 57-byte seed.
    {
        let seed = sha2::Sha512::digest(b"mcubench secure-boot seed: ed448");
        let sk = ed448_goldilocks::SigningKey::from(ed448_goldilocks::SecretKey::try_from(&seed[..57]).unwrap());
        let sig = sk.sign_raw(&sha512);
        emit_signed(&mut out, "ed448", 11, &sig.to_bytes(), &sk.verifying_key().to_bytes());
    }
    // RSA PKCS#1 v1.5 / SHA-256, e = 65537, over the SHA-256 digest.
    for (bits, id) in [(2048, 12), (3072, 13), (4096, 14)] {
        let (sig, key) = rsa_sign(bits, &sha256);
        emit_signed(&mut out, &format!("rsa_{bits}"), id, &sig, &key);
    }
    // SLH-DSA-SHA2-128s (FIPS 205 pure, empty context, deterministic) over the SHA-256 digest.
    {
        type P = slh_dsa::Sha2_128s;
        let s = |i: u8| seed(&format!("slh_dsa_sha2_128s/{i}"))[..16].to_vec();
        let sk = slh_dsa::SigningKey::<P>::slh_keygen_internal(&s(0), &s(1), &s(2));
        let sig = sk.try_sign_with_context(&sha256, &[], None).expect("SLH-DSA sign");
        let key = sk.verifying_key().to_bytes();
        emit_signed(&mut out, "slh_dsa_sha2_128s", 15, &sig.to_bytes(), &key);
    }
    // Hybrids: both schemes sign the same digest; the signature and key are the ML-DSA part then
    // the ECDSA part (fixed sizes), and the boot path accepts only when both verify.
    for (alg, id, digest) in [("ml_dsa_65_ecdsa_p384", 16u32, &sha384[..]), ("ml_dsa_87_ecdsa_p521", 17, &sha512[..])] {
        let ((ms, mk), (es, ek)) = if id == 16 {
            (ml_dsa_sign::<MlDsa65>(alg, digest), p384_sign(alg, digest))
        } else {
            (ml_dsa_sign::<MlDsa87>(alg, digest), p521_sign(alg, digest))
        };
        emit_signed(&mut out, alg, id, &[ms, es].concat(), &[mk, ek].concat());
    }

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
    // NIST CAVP FIPS 186-4 ECDSA SigGen.txt, [P-521,SHA-512], first vector: SHA-512 of Msg, Q, R,
    // S, as carried by RustCrypto's p521 crate (src/test_vectors/ecdsa.rs, 0.14.0).
    let q521 = [
        &[0x04][..],
        &hex("0061387fd6b95914e885f912edfbb5fb274655027f216c4091ca83e19336740fd81aedfe047f51b42bdf68161121013e0d55b117a14e4303f926c8debb77a7fdaad1"),
        &hex("00e7d0c75c38626e895ca21526b9f9fdf84dcecb93f2b233390550d2b1463b7ee3f58df7346435ff0434199583c97c665a97f12f706f2357da4b40288def888e59e6"),
    ]
    .concat();
    let m521 = hex(
        "65f83408092261bda599389df03382c5be01a81fe00a36f3f4bb6541263f801627c440e50809712b0cace7c217e6e5051af81de9bfec3204dcd63c4f9a741047",
    );
    let rs521 = [
        hex("004de826ea704ad10bc0f7538af8a3843f284f55c8b946af9235af5af74f2b76e099e4bc72fd79d28a380f8d4b4c919ac290d248c37983ba05aea42e2dd79fdd33e8"),
        hex("0087488c859a96fea266ea13bf6d114c429b163be97a57559086edb64aed4a18594b46fb9efc7fd25d8b2de8f09ca0587f54bd287299f47b2ff124aac566e8ee3b43"),
    ]
    .concat();
    {
        use p521::ecdsa::signature::hazmat::PrehashVerifier;
        let vk = p521::ecdsa::VerifyingKey::from_sec1_bytes(&q521).expect("CAVP P-521 Q");
        let sig = p521::ecdsa::Signature::from_slice(&rs521).expect("CAVP P-521 R,S");
        vk.verify_prehash(&m521, &sig).expect("CAVP P-521 vector verifies on the host");
    }
    emit(&mut out, "CAVP_P521_Q", &q521);
    emit(&mut out, "CAVP_P521_M", &m521);
    emit(&mut out, "CAVP_P521_RS", &rs521);
    // RFC 8032 section 7.4, Ed448 "-----Blank" (empty message, empty context).
    let rfc8032_448_sk = hex(
        "6c82a562cb808d10d632be89c8513ebf6c929f34ddfa8c9f63c9960ef6e348a3528c8a3fcc2f044e39a3fc5b94492f8f032e7549a20098f95b",
    );
    let rfc8032_448_pk = hex(
        "5fd7449b59b461fd2ce787ec616ad46a1da1342485a70e1f8a0ea75d80e96778edf124769b46c7061bd6783df1e50f6cd1fa1abeafe8256180",
    );
    let rfc8032_448_sig = hex(
        "533a37f6bbe457251f023c0d88f976ae2dfb504a843e34d2074fd823d41a591f2b233f034f628281f2fd7a22ddd47d7828c59bd0a21bfd3980ff0d2028d4b18a9df63e006c5d1c2d345b925d8dc00b4104852db99ac5c7cdda8530a113a0f4dbb61149f05a7363268c71d95808ff2e652600",
    );
    {
        let sk =
            ed448_goldilocks::SigningKey::from(ed448_goldilocks::SecretKey::try_from(&rfc8032_448_sk[..]).unwrap());
        assert_eq!(sk.verifying_key().to_bytes().to_vec(), rfc8032_448_pk, "RFC 8032 Ed448 blank: public key");
        assert_eq!(sk.sign_raw(b"").to_bytes().to_vec(), rfc8032_448_sig, "RFC 8032 Ed448 blank: signature");
    }
    emit(&mut out, "RFC8032_ED448_BLANK_KEY", &rfc8032_448_pk);
    emit(&mut out, "RFC8032_ED448_BLANK_SIG", &rfc8032_448_sig);
    // Wycheproof rsa_signature_2048_sha256_test.json (C2SP/wycheproof@061657f1, testvectors_v1),
    // RSASSA-PKCS1-v1_5 with SHA-256, tcId 3 (msg "Test", valid): modulus, e = 65537, signature.
    let wp_n = hex(
        "a2b451a07d0aa5f96e455671513550514a8a5b462ebef717094fa1fee82224e637f9746d3f7cafd31878d80325b6ef5a1700f65903b469429e89d6eac8845097b5ab393189db92512ed8a7711a1253facd20f79c15e8247f3d3e42e46e48c98e254a2fe9765313a03eff8f17e1a029397a1fa26a8dce26f490ed81299615d9814c22da610428e09c7d9658594266f5c021d0fceca08d945a12be82de4d1ece6b4c03145b5d3495d4ed5411eb878daf05fd7afc3e09ada0f1126422f590975a1969816f48698bcbba1b4d9cae79d460d8f9f85e7975005d9bc22c4e5ac0f7c1a45d12569a62807d3b9a02e5a530e773066f453d1f5b4c2e9cf7820283f742b9d5",
    );
    let wp_sig = hex(
        "264491e844c119f14e425c03282139a558dcdaeb82a4628173cd407fd319f9076eaebc0dd87a1c22e4d17839096886d58a9d5b7f7aeb63efec56c45ac7bead4203b6886e1faa90e028ec0ae094d46bf3f97efdd19045cfbc25a1abda2432639f9876405c0d68f8edbf047c12a454f7681d5d5a2b54bd3723d193dbad4338baad753264006e2d08931c4b8bb79aa1c9cad10eb6605f87c5831f6e2b08e002f9c6f21141f5841d92727dd3e1d99c36bc560da3c9067df99fcaf818941f72588be33032bad22caf6704223bb114d575b6d02d9d222b580005d930e8f40cce9f672eebb634a20177d84351627964b83f2053d736a84ab1a005f63bd5ba943de6205c",
    );
    let wp_key = [wp_n.clone(), vec![0, 1, 0, 1]].concat();
    {
        let pk = rsa::PublicKey::new(
            rsa::BoxedUint::from_be_slice_vartime(&wp_n),
            rsa::BoxedUint::from_be_slice_vartime(&[1, 0, 1]),
        )
        .unwrap();
        pk.verify(rsa::Pkcs1v15Sign::new::<sha2::Sha256>(), &sha2::Sha256::digest(b"Test"), &wp_sig)
            .expect("Wycheproof RSA tcId 3 verifies on the host");
    }
    emit(&mut out, "WYCHEPROOF_RSA2048_T3_KEY", &wp_key);
    emit(&mut out, "WYCHEPROOF_RSA2048_T3_SIG", &wp_sig);
    // NIST ACVP sigVer vectors (files under vectors/ name their source): FIPS 204 ML-DSA, one
    // valid case per parameter set; FIPS 205 SLH-DSA-SHA2-192s.
    for (set, name) in [("44", "ML_DSA_44"), ("65", "ML_DSA_65"), ("87", "ML_DSA_87")] {
        let v = data(&format!("vectors/acvp-ml-dsa-{set}-sigver.txt"));
        let ok = match set {
            "44" => acvp_ml_dsa::<MlDsa44>(&v),
            "65" => acvp_ml_dsa::<MlDsa65>(&v),
            _ => acvp_ml_dsa::<MlDsa87>(&v),
        };
        assert!(ok, "ACVP ML-DSA-{set} sigVer vector verifies on the host");
        for (k, field) in [("PK", "pk"), ("MSG", "message"), ("SIG", "signature")] {
            emit(&mut out, &format!("ACVP_{name}_{k}"), &v[field]);
        }
    }
    {
        type P = slh_dsa::Sha2_192s;
        let v = data("vectors/acvp-slh-dsa-sha2-192s-sigver.txt");
        let vk = slh_dsa::VerifyingKey::<P>::try_from(&v["pk"][..]).expect("ACVP SLH-DSA pk");
        let sig = slh_dsa::Signature::<P>::try_from(&v["signature"][..]).expect("ACVP SLH-DSA signature");
        vk.slh_verify_internal(&[&v["message"]], &sig).expect("ACVP SLH-DSA-SHA2-192s sigVer verifies on the host");
        for (k, field) in [("PK", "pk"), ("MSG", "message"), ("SIG", "signature")] {
            emit(&mut out, &format!("ACVP_SLH_DSA_SHA2_192S_{k}"), &v[field]);
        }
    }
    // FIPS 205 ACVP sigGen, SLH-DSA-SHA2-128s (external interface, pure, with a context): NIST's
    // signature, verified here as the firmware verifies it.
    {
        type P = slh_dsa::Sha2_128s;
        let v = data("vectors/acvp-slh-dsa-sha2-128s-siggen.txt");
        let vk = slh_dsa::VerifyingKey::<P>::try_from(&v["pk"][..]).expect("ACVP SLH-DSA-SHA2-128s pk");
        let sig = slh_dsa::Signature::<P>::try_from(&v["signature"][..]).expect("ACVP SLH-DSA-SHA2-128s signature");
        vk.try_verify_with_context(&v["message"], &v["context"], &sig)
            .expect("ACVP SLH-DSA-SHA2-128s sigGen tcId 157 verifies on the host");
        for (k, field) in [("PK", "pk"), ("MSG", "message"), ("CTX", "context"), ("SIG", "signature")] {
            emit(&mut out, &format!("ACVP_SLH_DSA_SHA2_128S_{k}"), &v[field]);
        }
    }
    // FIPS 205 ACVP keyGen, SLH-DSA-SHA2-128s (skSeed, skPrf, pkSeed -> pk), checked here only: the
    // host's 128s key generation is the one FIPS 205 specifies.
    {
        let sk = slh_dsa::SigningKey::<slh_dsa::Sha2_128s>::slh_keygen_internal(
            &hex("ac379f047faab2004f3ae32350ac9a3d"),
            &hex("829fff0aa59e956a87f3971c4d58e710"),
            &hex("0566d240cc519834322eafbcc73c79f5"),
        );
        assert_eq!(
            sk.verifying_key().to_bytes().to_vec(),
            hex("0566d240cc519834322eafbcc73c79f5a4b84f02e8bf0cbd54017b2d3c494b57"),
            "ACVP SLH-DSA-SHA2-128s keyGen"
        );
    }
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
            "SHA512_ABC",
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
            sha2::Sha512::digest(b"abc").to_vec(),
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

    // FIPS 180-4 / FIPS 202 examples (the 448-bit message "abcdbcde...nopq", and for SHA-384 the
    // 896-bit "abcdefgh...nopqrstu"): for SHA-2 their padding spills into a second block, a path
    // that neither "abc" nor the 100 KiB image takes in the *_asm rows' drivers.
    let m448 = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    let m896 = b"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    for (name, want, got) in [
        (
            "SHA256_448",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
            sha2::Sha256::digest(m448).to_vec(),
        ),
        (
            "SHA384_896",
            "09330c33f71147e83d192fc782cd1b4753111b173b3b05d22fa08086e3b0f712fcc7c71a557e2db966c3e9fa91746039",
            sha2::Sha384::digest(m896).to_vec(),
        ),
        (
            "SHA3_256_448",
            "41c0dba2a9d6240849100376a8235e2c82e1b9998a999e21db32dd97496d3376",
            sha3::Sha3_256::digest(m448).to_vec(),
        ),
    ] {
        assert_eq!(hex(want), got, "{name}");
        emit(&mut out, name, &hex(want));
    }
    emit(&mut out, "MSG_448", m448);
    emit(&mut out, "MSG_896", m896);

    hbs::emit_rows(&mut out, &sha256);

    fs::write(PathBuf::from(env::var("OUT_DIR").unwrap()).join("signed.rs"), out).unwrap();
}
