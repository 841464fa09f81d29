//! Host side of the stateful hash-based signature rows: LMS (HSS with one level,
//! LMS_SHA256_M32_H10 / LMOTS_SHA256_N32_W8) and XMSS-SHA2_10_256.
//!
//! Key generation builds the whole Merkle tree: 1024 one-time keys, ~9 M SHA-256 calls for LMS at
//! W = 8 and ~3.5 M for XMSS. Build scripts run unoptimised (Cargo's `build-override` default):
//! both took 43 s of CPU that way (1 s optimised), on every build of every memory layout. As with the RSA
//! primes, the outcome of key generation is committed instead (keys/lms-h10-w8.txt,
//! keys/xmss-sha2_10_256.txt: the leaf index, the root and that leaf's authentication path; the
//! secret seeds come from fixed labels here), and every build signs the image digest with the
//! leaf's one-time key and verifies the result, so a key file that does not belong to the seeds
//! fails the build. `MCUBENCH_HBS_KEYGEN=<dir>` regenerates both files into `<dir>` (full key
//! generation; add `CARGO_PROFILE_RELEASE_BUILD_OVERRIDE_OPT_LEVEL=3` to make it take seconds).
//!
//! LMS signs with RustCrypto's `lms-signature` (its LM-OTS signer; its LMS verifier checks the
//! result here), a different implementation from the firmware's verifier (src/lms.rs). XMSS signs
//! with the code below on the firmware verifier's hash functions (src/xmss.rs, included), checked
//! on the firmware against the reference implementation's known answer.

use std::{env, fmt::Write as _, fs, path::Path};

use lms_signature::lms::{LmsSha256M32H5, LmsSha256M32H10};
use lms_signature::ots::{LmsOtsSha256N32W4, LmsOtsSha256N32W8};
use signature::rand_core::{TryCryptoRng, TryRng};
use signature::{RandomizedSignerMut as _, Verifier as _};

#[path = "../src/xmss.rs"]
mod xmss;
// The firmware's LMS verifier, run here too: malformed signatures must be rejected (below).
#[path = "../src/lms.rs"]
mod lms;

/// The LMS row's parameter set: LMS_SHA256_M32_H10 (type 6) with LMOTS_SHA256_N32_W8 (type 4).
type Lms = LmsSha256M32H10<LmsOtsSha256N32W8>;
const LMS_TYPE: u32 = 6;
const LMOTS_TYPE: u32 = 4;
const LMS_H: usize = 10;

/// Algorithm ids in the image header (32 and up: left clear of other rows' ids).
const LMS_ALG_ID: u32 = 32;
const XMSS_ALG_ID: u32 = 33;

/// A deterministic randomness source for the LM-OTS randomizer C: SHA-256 in counter mode over a
/// fixed label (the same source gives the same signature).
struct LabelRng {
    key: [u8; 32],
    ctr: u64,
}

impl TryRng for LabelRng {
    type Error = core::convert::Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        let mut b = [0u8; 4];
        self.try_fill_bytes(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let mut b = [0u8; 8];
        self.try_fill_bytes(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        use sha2::Digest as _;
        for chunk in dst.chunks_mut(32) {
            let block = sha2::Sha256::new().chain_update(self.key).chain_update(self.ctr.to_be_bytes()).finalize();
            chunk.copy_from_slice(&block[..chunk.len()]);
            self.ctr += 1;
        }
        Ok(())
    }
}
impl TryCryptoRng for LabelRng {}

fn lms_secrets() -> ([u8; 16], [u8; 32]) {
    let id: [u8; 16] = super::seed("lms_h10_w8/I")[..16].try_into().unwrap();
    (id, super::seed("lms_h10_w8/SEED"))
}

fn xmss_secrets() -> ([u8; 32], [u8; 32], [u8; 32]) {
    (
        super::seed("xmss_sha2_10_256/SK_SEED"),
        super::seed("xmss_sha2_10_256/SK_PRF"),
        super::seed("xmss_sha2_10_256/SEED"),
    )
}

/// The leaf both rows sign with: 0b0101010101, so the path takes both sides at every level.
const LEAF: u32 = 0x155;

fn u32_field(v: &std::collections::BTreeMap<String, Vec<u8>>, k: &str, file: &str) -> u32 {
    let b = v.get(k).unwrap_or_else(|| panic!("{file}: no `{k}=`"));
    u32::from_be_bytes(b[..].try_into().unwrap_or_else(|_| panic!("{file}: `{k}` is 4 bytes")))
}

/// HSS public key (L = 1) and signature (Nspk = 0) over `digest`, from the committed key file.
fn lms_sign(digest: &[u8]) -> (Vec<u8>, Vec<u8>) {
    const FILE: &str = "keys/lms-h10-w8.txt";
    let (id, seed) = lms_secrets();
    let key = super::data(FILE);
    let q = u32_field(&key, "q", FILE);
    let (root, path) = (&key["root"], &key["path"]);
    assert_eq!((root.len(), path.len()), (32, 32 * LMS_H), "{FILE}: root 32 bytes, path 320 bytes");
    let mut ots = lms_signature::ots::SigningKey::<LmsOtsSha256N32W8>::new_from_seed(q, id, seed);
    let mut rng = LabelRng { key: super::seed("lms_h10_w8/C"), ctr: 0 };
    let ots_sig = ots.try_sign_with_rng(&mut rng, digest).expect("LM-OTS sign");
    let ots_sig: lms_signature::ots::signature::Output<LmsOtsSha256N32W8> = ots_sig.into();
    let lms_sig = [&q.to_be_bytes()[..], &ots_sig, &LMS_TYPE.to_be_bytes(), path].concat();
    let lms_pk = [&LMS_TYPE.to_be_bytes()[..], &LMOTS_TYPE.to_be_bytes(), &id, root].concat();
    // lms-signature's own verifier: the committed path and root belong to these seeds.
    let vk = lms_signature::lms::VerifyingKey::<Lms>::try_from(&lms_pk[..]).expect("LMS public key");
    let sig = lms_signature::lms::Signature::<Lms>::try_from(&lms_sig[..]).expect("LMS signature");
    vk.verify(digest, &sig).unwrap_or_else(|_| {
        panic!("{FILE} does not match the LMS seeds in build/hbs.rs: regenerate it with MCUBENCH_HBS_KEYGEN=<dir>")
    });
    ([&0u32.to_be_bytes()[..], &lms_sig].concat(), [&1u32.to_be_bytes()[..], &lms_pk].concat())
}

/// One XMSS leaf's WOTS+ secret key chain starts (the reference implementation's PRF_keygen:
/// SHA2-256(toByte(4, 32) || SK_SEED || SEED || ADRS)).
fn wots_sk(sk_seed: &[u8], seed: &[u8], idx: u32, chain: usize) -> [u8; 32] {
    let mut adrs = xmss::Adrs::new(xmss::OTS, idx);
    adrs.0[5] = chain as u32;
    xmss::hash(4, sk_seed, &[seed, &adrs.bytes()])
}

fn xmss_leaf(sk_seed: &[u8], seed: &[u8], idx: u32) -> [u8; 32] {
    let mut pk = [[0u8; 32]; xmss::LEN];
    let mut adrs = xmss::Adrs::new(xmss::OTS, idx);
    for (i, node) in pk.iter_mut().enumerate() {
        adrs.0[5] = i as u32;
        *node = xmss::chain(&wots_sk(sk_seed, seed, idx, i), 0, 15, seed, &mut adrs);
    }
    xmss::ltree(&mut pk, seed, &mut xmss::Adrs::new(xmss::LTREE, idx))
}

/// XMSS public key (OID || root || SEED) and signature over `digest` at the committed leaf.
fn xmss_sign(digest: &[u8]) -> (Vec<u8>, Vec<u8>) {
    const FILE: &str = "keys/xmss-sha2_10_256.txt";
    let (sk_seed, sk_prf, seed) = xmss_secrets();
    let key = super::data(FILE);
    let idx = u32_field(&key, "idx", FILE);
    let (root, auth) = (&key["root"], &key["auth"]);
    assert_eq!((root.len(), auth.len()), (32, 32 * xmss::H), "{FILE}: root 32 bytes, auth 320 bytes");
    let mut idx_bytes = [0u8; 32];
    idx_bytes[28..].copy_from_slice(&idx.to_be_bytes());
    let r = xmss::hash(3, &sk_prf, &[&idx_bytes]);
    let m = xmss::hash(2, &r, &[root, &idx_bytes, digest]);
    let mut sig = [&idx.to_be_bytes()[..], &r].concat();
    let mut adrs = xmss::Adrs::new(xmss::OTS, idx);
    for (i, d) in xmss::digits(&m).into_iter().enumerate() {
        adrs.0[5] = i as u32;
        sig.extend(xmss::chain(&wots_sk(&sk_seed, &seed, idx, i), 0, d, &seed, &mut adrs));
    }
    sig.extend(auth);
    let pk = [&xmss::OID.to_be_bytes()[..], root, &seed].concat();
    assert!(
        xmss::verify(&pk, digest, &sig),
        "{FILE} does not match the XMSS seeds in build/hbs.rs: regenerate it with MCUBENCH_HBS_KEYGEN=<dir>"
    );
    (sig, pk)
}

/// Full key generation for both rows: writes the two key files into `dir`.
fn keygen(dir: &Path) {
    let (id, seed) = lms_secrets();
    let sk = [&LMS_TYPE.to_be_bytes()[..], &LMOTS_TYPE.to_be_bytes(), &LEAF.to_be_bytes(), &id, &seed].concat();
    let mut lms = lms_signature::lms::SigningKey::<Lms>::try_from(&sk[..]).expect("LMS private key");
    let mut rng = LabelRng { key: [0; 32], ctr: 0 };
    let sig: Vec<u8> = lms.try_sign_with_rng(&mut rng, b"keygen").expect("LMS sign").into();
    let path = &sig[sig.len() - 32 * LMS_H..];
    let root = lms.public().k().to_vec();
    let mut text = String::from(
        "# LMS_SHA256_M32_H10 / LMOTS_SHA256_N32_W8 key of the lms_h10_w8 row (I and SEED: build/hbs.rs),\n\
         # made by lms-signature's key generation (MCUBENCH_HBS_KEYGEN): leaf q, root T[1], q's path.\n",
    );
    writeln!(text, "q={LEAF:08x}\nroot={}\npath={}", hex(&root), hex(path)).unwrap();
    fs::write(dir.join("lms-h10-w8.txt"), text).unwrap();

    let (sk_seed, _, seed) = xmss_secrets();
    let mut level: Vec<[u8; 32]> = (0..1u32 << xmss::H).map(|i| xmss_leaf(&sk_seed, &seed, i)).collect();
    let mut auth = Vec::new();
    for k in 0..xmss::H {
        auth.extend(level[(LEAF as usize >> k) ^ 1]);
        level = level
            .chunks_exact(2)
            .enumerate()
            .map(|(j, pair)| {
                let mut adrs = xmss::Adrs::new(xmss::HASH_TREE, 0);
                adrs.0[5] = k as u32;
                adrs.0[6] = j as u32;
                xmss::rand_hash(&pair[0], &pair[1], &seed, &mut adrs)
            })
            .collect();
    }
    let mut text = String::from(
        "# XMSS-SHA2_10_256 key of the xmss_sha2_10_256 row (SK_SEED, SK_PRF, SEED: build/hbs.rs), made\n\
         # by the full key generation in build/hbs.rs (MCUBENCH_HBS_KEYGEN): leaf idx, root, idx's path.\n",
    );
    writeln!(text, "idx={LEAF:08x}\nroot={}\nauth={}", hex(&level[0]), hex(&auth)).unwrap();
    fs::write(dir.join("xmss-sha2_10_256.txt"), text).unwrap();
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// One level of an RFC 8554 test case's HSS signature checked by lms-signature.
fn lms_level_ok<M: lms_signature::lms::LmsMode>(pk: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    match (lms_signature::lms::VerifyingKey::<M>::try_from(pk), lms_signature::lms::Signature::<M>::try_from(sig)) {
        (Ok(vk), Ok(sig)) => vk.verify(msg, &sig).is_ok(),
        _ => false,
    }
}

/// The firmware's verifiers (src/lms.rs, src/xmss.rs) fail closed: on the host, at every build,
/// they accept the rows' signatures and RFC 8554's test cases, and reject each with a bit flipped in
/// every field, cut short or lengthened, and keys or indices out of range.
fn reject_malformed(digest: &[u8]) {
    let flips = |v: &[u8], at: &[usize]| -> Vec<Vec<u8>> {
        at.iter()
            .map(|&i| {
                let mut b = v.to_vec();
                b[i] ^= 1;
                b
            })
            .collect()
    };
    let (sig, key) = lms_sign(digest);
    assert!(lms::hss_verify(&key, digest, &sig), "firmware LMS verifier accepts the row's signature");
    // Nspk, q, LM-OTS type, C, y[0], y[33], LMS type, path[0], path[9].
    for bad in flips(&sig, &[3, 7, 11, 12, 44, 1100, 1135, 1140, 1455]) {
        assert!(!lms::hss_verify(&key, digest, &bad), "firmware LMS verifier rejects a flipped bit");
    }
    // L, LMS type, LM-OTS type, I, T[1].
    for bad in flips(&key, &[3, 7, 11, 12, 59]) {
        assert!(!lms::hss_verify(&bad, digest, &sig), "firmware LMS verifier rejects a wrong key");
    }
    assert!(!lms::hss_verify(&key, digest, &sig[..sig.len() - 1]), "LMS: signature cut short");
    assert!(!lms::hss_verify(&key, digest, &[&sig[..], &[0]].concat()), "LMS: signature too long");
    assert!(!lms::hss_verify(&key[..59], digest, &sig), "LMS: key cut short");
    for tc in [1, 2] {
        let v = super::data(&format!("vectors/rfc8554-tc{tc}.txt"));
        let (pk, msg, sig) = (&v["pk"], &v["message"], &v["signature"]);
        assert!(lms::hss_verify(pk, msg, sig), "firmware LMS verifier accepts RFC 8554 test case {tc}");
        for bad in flips(sig, &[3, 100, sig.len() - 1]) {
            assert!(!lms::hss_verify(pk, msg, &bad), "RFC 8554 test case {tc} with a flipped bit is rejected");
        }
    }
    let (sig, key) = xmss_sign(digest);
    // idx, r, WOTS+ chain 0 and 66, auth path 0 and 9.
    for bad in flips(&sig, &[3, 4, 36, 36 + 66 * 32, 2180, 2499]) {
        assert!(!xmss::verify(&key, digest, &bad), "firmware XMSS verifier rejects a flipped bit");
    }
    // OID, root, SEED.
    for bad in flips(&key, &[3, 4, 67]) {
        assert!(!xmss::verify(&bad, digest, &sig), "firmware XMSS verifier rejects a wrong key");
    }
    let mut far = sig.clone();
    far[..4].copy_from_slice(&1024u32.to_be_bytes());
    assert!(!xmss::verify(&key, digest, &far), "XMSS: idx beyond the tree");
    assert!(!xmss::verify(&key, digest, &sig[..2499]), "XMSS: signature cut short");
}

/// The two rows' statics, their official vectors (checked on the host first), from the image's
/// SHA-256 digest.
pub fn emit_rows(out: &mut String, sha256: &[u8]) {
    if let Ok(dir) = env::var("MCUBENCH_HBS_KEYGEN") {
        keygen(Path::new(&dir));
    }
    println!("cargo:rerun-if-env-changed=MCUBENCH_HBS_KEYGEN");
    println!("cargo:rerun-if-changed=build/hbs.rs");
    println!("cargo:rerun-if-changed=src/xmss.rs");

    let (sig, key) = lms_sign(sha256);
    assert_eq!((sig.len(), key.len()), (1456, 60), "HSS (L = 1) H10/W8 signature and public key sizes");
    super::emit_signed(out, "lms_h10_w8", LMS_ALG_ID, &sig, &key);
    let (sig, key) = xmss_sign(sha256);
    assert_eq!((sig.len(), key.len()), (2500, 68), "XMSS-SHA2_10_256 signature and public key sizes");
    super::emit_signed(out, "xmss_sha2_10_256", XMSS_ALG_ID, &sig, &key);

    // RFC 8554 Appendix F, test cases 1 and 2 (HSS, two levels): each level checked by
    // lms-signature here (test case 1: H5/W8 over H5/W8; test case 2: H10/W4 over H5/W8).
    for (tc, top_sig_len) in [(1, 4 + 4 + 32 + 34 * 32 + 4 + 5 * 32), (2, 4 + 4 + 32 + 67 * 32 + 4 + 10 * 32)] {
        let v = super::data(&format!("vectors/rfc8554-tc{tc}.txt"));
        let (pk, msg, sig) = (&v["pk"], &v["message"], &v["signature"]);
        let (top, rest) = sig[4..].split_at(top_sig_len);
        let (child_pk, child_sig) = rest.split_at(56);
        let top_ok = if tc == 1 {
            lms_level_ok::<LmsSha256M32H5<LmsOtsSha256N32W8>>(&pk[4..], child_pk, top)
        } else {
            lms_level_ok::<LmsSha256M32H10<LmsOtsSha256N32W4>>(&pk[4..], child_pk, top)
        };
        let child_ok = lms_level_ok::<LmsSha256M32H5<LmsOtsSha256N32W8>>(child_pk, msg, child_sig);
        assert!(top_ok && child_ok, "RFC 8554 test case {tc} verifies on the host (lms-signature)");
        for (k, field) in [("PK", "pk"), ("MSG", "message"), ("SIG", "signature")] {
            super::emit(out, &format!("RFC8554_TC{tc}_{k}"), &v[field]);
        }
    }
    reject_malformed(sha256);

    // XMSS-SHA2_10_256 known answer of the XMSS reference implementation, as liboqs carries it.
    let v = super::data("vectors/xmss-sha2_10_256-liboqs-kat.txt");
    assert!(xmss::verify(&v["pk"], &v["message"], &v["signature"]), "liboqs XMSS-SHA2_10_256 KAT verifies on the host");
    for (k, field) in [("PK", "pk"), ("MSG", "message"), ("SIG", "signature")] {
        super::emit(out, &format!("LIBOQS_XMSS_KAT0_{k}"), &v[field]);
    }
}
