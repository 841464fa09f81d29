//! Verify-only secure-boot firmware: for each algorithm, the boot path checks a signed 100 KiB
//! image (hash it, verify the signature over the digest, or for hash-only rows compare the
//! digest with the header's) and reports through the mcubench result protocol. The image,
//! keys, signatures and headers are made on the host at build time (build.rs, fixed seeds).
//!
//! Per algorithm `<alg>` (the table's row key) the ELF holds, by these exact names, what the
//! host's secure-boot table reads:
//! - `sb_boot_<alg>`: the whole verify path (its call tree is the row's code size, its static
//!   stack bound the row's stack bound);
//! - `sb_hdr_<alg>` and, for signature schemes, `sb_sig_<alg>` and `sb_key_<alg>`: the image
//!   header (fixed fields and key hint or digest), the signature, the public key.
//!
//! KATs per algorithm: `<alg>/hash` (the image's digest), `<alg>/verify` (the signature over
//! the digest), `<alg>/boot` (the whole path, which must accept), `<alg>/tampered` (the whole
//! path over the image with one byte flipped: passes only when the path rejects it, so it
//! fails closed), and official vectors (`<alg>/rfc8032-1`, `<alg>/cavp-1`, `<alg>/fips-abc`,
//! `<alg>/acvp-...`, `<alg>/wycheproof-3`, `<alg>/rfc8554-tc1`, `<alg>/ref-kat-0`; for the `*_asm`
//! rows, whose hash is wolfSSL's Thumb-2 assembly (src/asm.rs), also `<alg>/fips-448` or
//! `sha384_asm/fips-896`). Hybrid rows (`ml_dsa_65_ecdsa_p384`, `ml_dsa_87_ecdsa_p521`) also
//! reject an image whose ML-DSA part or ECDSA part alone is bad (`<alg>/tampered-ml-dsa`,
//! `<alg>/tampered-ecdsa`). LMS and XMSS are verified by this crate's own `lms` and `xmss`
//! modules (no maintained `no_std` crate builds for a thumb target).
//!
//! RSA (the `rsa` crate) keeps its big integers on the heap: a linked-list heap
//! (embedded-alloc) in a static arena, counted by mcubench-support's `TrackingHeap`, so RSA's
//! KAT records carry `heap=` (bytes the operation took) and the `end` record the run's peak.

#![no_std]
#![no_main]

extern crate alloc;

mod asm;

use core::hint::black_box;
use ed25519_dalek::Verifier as _;
use mcubench_support::{Session, entry, measure};
use p256::ecdsa::signature::hazmat::PrehashVerifier;
use sha2::Digest as _;

include!(concat!(env!("OUT_DIR"), "/signed.rs"));

/// RFC 8554 HSS/LMS verification (written here: lms-signature needs std).
mod lms;
/// RFC 8391 XMSS-SHA2_10_256 verification (written here: no maintained no_std crate).
mod xmss;

/// The heap arena's size: RSA-4096 verify is the only user (a few KiB of big integers).
const HEAP_ARENA: usize = 32 * 1024;
static mut HEAP_MEM: [u8; HEAP_ARENA] = [0; HEAP_ARENA];

#[global_allocator]
static HEAP: mcubench_support::TrackingHeap<embedded_alloc::LlffHeap> =
    mcubench_support::TrackingHeap::new(embedded_alloc::LlffHeap::empty());

/// Byte offset of the fixed header fields: magic (4), version (4), image length (4), alg id (4).
const FIXED: usize = 16;
/// The one byte the tampered KAT flips (the middle of the image).
const TAMPER_AT: usize = IMAGE_LEN / 2;

/// RAM copy of the image with one byte flipped, for the tampered KATs.
static mut TAMPERED: [u8; IMAGE_LEN] = [0; IMAGE_LEN];

/// The fixed fields every boot path checks before any hashing.
fn header_ok(hdr: &[u8], image: &[u8], alg_id: u32) -> bool {
    hdr.len() >= FIXED
        && hdr[..4] == *b"MCBH"
        && u32::from_le_bytes([hdr[4], hdr[5], hdr[6], hdr[7]]) == 1
        && u32::from_le_bytes([hdr[8], hdr[9], hdr[10], hdr[11]]) as usize == image.len()
        && u32::from_le_bytes([hdr[12], hdr[13], hdr[14], hdr[15]]) == alg_id
}

// ---- The boot paths: one no_mangle function per row, never inlined (the host finds them). ----

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_sha256(image: &[u8], hdr: &[u8]) -> bool {
    header_ok(hdr, image, 1) && sha2::Sha256::digest(image)[..] == hdr[FIXED..]
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_sha384(image: &[u8], hdr: &[u8]) -> bool {
    header_ok(hdr, image, 2) && sha2::Sha384::digest(image)[..] == hdr[FIXED..]
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_sha3_256(image: &[u8], hdr: &[u8]) -> bool {
    header_ok(hdr, image, 3) && sha3::Sha3_256::digest(image)[..] == hdr[FIXED..]
}

// The same three hash-only rows with wolfSSL's Thumb-2 assembly as the hash (src/asm.rs).

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_sha256_asm(image: &[u8], hdr: &[u8]) -> bool {
    header_ok(hdr, image, 101) && asm::sha256(image)[..] == hdr[FIXED..]
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_sha384_asm(image: &[u8], hdr: &[u8]) -> bool {
    header_ok(hdr, image, 102) && asm::sha384(image)[..] == hdr[FIXED..]
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_sha3_256_asm(image: &[u8], hdr: &[u8]) -> bool {
    header_ok(hdr, image, 103) && asm::sha3_256(image)[..] == hdr[FIXED..]
}

fn verify_p256(key: &[u8], digest: &[u8], sig: &[u8]) -> bool {
    let (Ok(vk), Ok(sig)) = (p256::ecdsa::VerifyingKey::from_sec1_bytes(key), p256::ecdsa::Signature::from_slice(sig))
    else {
        return false;
    };
    vk.verify_prehash(digest, &sig).is_ok()
}

fn verify_ed25519(key: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    let (Ok(key), Ok(sig)) = (<&[u8; 32]>::try_from(key), ed25519_dalek::Signature::from_slice(sig)) else {
        return false;
    };
    let Ok(vk) = ed25519_dalek::VerifyingKey::from_bytes(key) else { return false };
    vk.verify(msg, &sig).is_ok()
}

fn verify_ml_dsa<P: ml_dsa::MlDsaParams>(key: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    let (Ok(key), Ok(sig)) =
        (<&ml_dsa::EncodedVerifyingKey<P>>::try_from(key), <&ml_dsa::EncodedSignature<P>>::try_from(sig))
    else {
        return false;
    };
    let Some(sig) = ml_dsa::Signature::<P>::decode(sig) else { return false };
    ml_dsa::VerifyingKey::<P>::decode(key).verify_with_context(msg, &[], &sig)
}

fn verify_p384(key: &[u8], digest: &[u8], sig: &[u8]) -> bool {
    let (Ok(vk), Ok(sig)) = (p384::ecdsa::VerifyingKey::from_sec1_bytes(key), p384::ecdsa::Signature::from_slice(sig))
    else {
        return false;
    };
    vk.verify_prehash(digest, &sig).is_ok()
}

/// The header's key hint must name the key the bootloader holds.
fn key_hint_ok(hdr: &[u8], key: &[u8]) -> bool {
    hdr.len() == FIXED + 32 && sha2::Sha256::digest(key)[..] == hdr[FIXED..]
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_ecdsa_p256(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 4) && key_hint_ok(hdr, key) && verify_p256(key, &sha2::Sha256::digest(image), sig)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_ecdsa_p384(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 9) && key_hint_ok(hdr, key) && verify_p384(key, &sha2::Sha384::digest(image), sig)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_ed25519(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 5) && key_hint_ok(hdr, key) && verify_ed25519(key, &sha2::Sha256::digest(image), sig)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_ml_dsa_44(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 6)
        && key_hint_ok(hdr, key)
        && verify_ml_dsa::<ml_dsa::MlDsa44>(key, &sha2::Sha256::digest(image), sig)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_ml_dsa_65(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 7)
        && key_hint_ok(hdr, key)
        && verify_ml_dsa::<ml_dsa::MlDsa65>(key, &sha2::Sha256::digest(image), sig)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_ml_dsa_87(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 8)
        && key_hint_ok(hdr, key)
        && verify_ml_dsa::<ml_dsa::MlDsa87>(key, &sha2::Sha256::digest(image), sig)
}

fn verify_p521(key: &[u8], digest: &[u8], sig: &[u8]) -> bool {
    let (Ok(vk), Ok(sig)) = (p521::ecdsa::VerifyingKey::from_sec1_bytes(key), p521::ecdsa::Signature::from_slice(sig))
    else {
        return false;
    };
    vk.verify_prehash(digest, &sig).is_ok()
}

fn verify_ed448(key: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    let (Ok(key), Ok(sig)) = (<[u8; 57]>::try_from(key), ed448_goldilocks::Signature::from_slice(sig)) else {
        return false;
    };
    let Ok(vk) = ed448_goldilocks::VerifyingKey::from_bytes(&key) else { return false };
    vk.verify_raw(&sig, msg).is_ok()
}

/// RSA PKCS#1 v1.5 / SHA-256 over `digest`; `key` is the modulus (big endian) then e (4 bytes).
fn verify_rsa(key: &[u8], digest: &[u8], sig: &[u8]) -> bool {
    let Some((n, e)) = key.split_at_checked(key.len().wrapping_sub(4)) else { return false };
    let Ok(pk) =
        rsa::PublicKey::new(rsa::BoxedUint::from_be_slice_vartime(n), rsa::BoxedUint::from_be_slice_vartime(e))
    else {
        return false;
    };
    pk.verify(rsa::Pkcs1v15Sign::new::<sha2::Sha256>(), digest, sig).is_ok()
}

/// SLH-DSA (FIPS 205 pure, empty context) over `msg`.
fn verify_slh_dsa<P: slh_dsa::ParameterSet>(key: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    verify_slh_dsa_ctx::<P>(key, msg, &[], sig)
}

/// SLH-DSA (FIPS 205 pure) over `msg` with context `ctx`.
fn verify_slh_dsa_ctx<P: slh_dsa::ParameterSet>(key: &[u8], msg: &[u8], ctx: &[u8], sig: &[u8]) -> bool {
    let (Ok(vk), Ok(sig)) = (slh_dsa::VerifyingKey::<P>::try_from(key), slh_dsa::Signature::<P>::try_from(sig)) else {
        return false;
    };
    vk.try_verify_with_context(msg, ctx, &sig).is_ok()
}

/// A hybrid verifies only when both parts do: ML-DSA over the digest (its signature and key come
/// first, `ml_sig` and `ml_key` bytes), then ECDSA over the same digest.
fn verify_hybrid(
    key: &[u8],
    digest: &[u8],
    sig: &[u8],
    (ml_key, ml_sig): (usize, usize),
    ml_dsa: impl Fn(&[u8], &[u8], &[u8]) -> bool,
    ecdsa: impl Fn(&[u8], &[u8], &[u8]) -> bool,
) -> bool {
    let (Some((mk, ek)), Some((ms, es))) = (key.split_at_checked(ml_key), sig.split_at_checked(ml_sig)) else {
        return false;
    };
    // Both are always checked (no early exit on the first), so boot time does not depend on which fails.
    let ml = ml_dsa(mk, digest, ms);
    let ec = ecdsa(ek, digest, es);
    ml & ec
}

const ML_DSA_65_KEY: usize = 1952;
const ML_DSA_65_SIG: usize = 3309;
const ML_DSA_87_KEY: usize = 2592;
const ML_DSA_87_SIG: usize = 4627;

fn verify_ml_dsa_65_p384(key: &[u8], digest: &[u8], sig: &[u8]) -> bool {
    verify_hybrid(key, digest, sig, (ML_DSA_65_KEY, ML_DSA_65_SIG), verify_ml_dsa::<ml_dsa::MlDsa65>, verify_p384)
}

fn verify_ml_dsa_87_p521(key: &[u8], digest: &[u8], sig: &[u8]) -> bool {
    verify_hybrid(key, digest, sig, (ML_DSA_87_KEY, ML_DSA_87_SIG), verify_ml_dsa::<ml_dsa::MlDsa87>, verify_p521)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_ecdsa_p521(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 10) && key_hint_ok(hdr, key) && verify_p521(key, &sha2::Sha512::digest(image), sig)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_ed448(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 11) && key_hint_ok(hdr, key) && verify_ed448(key, &sha2::Sha512::digest(image), sig)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_rsa_2048(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 12) && key_hint_ok(hdr, key) && verify_rsa(key, &sha2::Sha256::digest(image), sig)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_rsa_3072(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 13) && key_hint_ok(hdr, key) && verify_rsa(key, &sha2::Sha256::digest(image), sig)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_rsa_4096(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 14) && key_hint_ok(hdr, key) && verify_rsa(key, &sha2::Sha256::digest(image), sig)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_slh_dsa_sha2_128s(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 15)
        && key_hint_ok(hdr, key)
        && verify_slh_dsa::<slh_dsa::Sha2_128s>(key, &sha2::Sha256::digest(image), sig)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_ml_dsa_65_ecdsa_p384(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 16) && key_hint_ok(hdr, key) && verify_ml_dsa_65_p384(key, &sha2::Sha384::digest(image), sig)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_ml_dsa_87_ecdsa_p521(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 17) && key_hint_ok(hdr, key) && verify_ml_dsa_87_p521(key, &sha2::Sha512::digest(image), sig)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_lms_h10_w8(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 32) && key_hint_ok(hdr, key) && lms::hss_verify(key, &sha2::Sha256::digest(image), sig)
}

#[unsafe(no_mangle)]
#[inline(never)]
pub fn sb_boot_xmss_sha2_10_256(image: &[u8], hdr: &[u8], sig: &[u8], key: &[u8]) -> bool {
    header_ok(hdr, image, 33) && key_hint_ok(hdr, key) && xmss::verify(key, &sha2::Sha256::digest(image), sig)
}

// ---- KAT helpers ----

const ACCEPT: &[u8] = &[1];
const REJECT: &[u8] = &[0];

fn verdict(ok: bool) -> &'static [u8] {
    if ok { ACCEPT } else { REJECT }
}

fn tampered() -> &'static [u8] {
    // SAFETY: single-threaded firmware; written once in main before any reader.
    unsafe { &*core::ptr::addr_of!(TAMPERED) }
}

/// KATs of one hash-only row. Generic (not `fn` pointers): every call stays direct, so the
/// static stack analysis sees no address-taken functions that indirect calls might reach.
fn hash_row(
    s: &mut Session,
    alg: &str,
    name: &str,
    hash: impl Fn(&[u8], &mut [u8]),
    boot: impl Fn(&[u8], &[u8]) -> bool,
    hdr: &[u8],
    abc: &[u8],
) {
    let mut out = [0u8; 64];
    let n = hdr.len() - FIXED;
    let (image, hdr) = (black_box(&sb_image[..]), black_box(hdr));
    let m = measure(|| hash(image, &mut out[..n]));
    s.kat_bytes(&id(alg, "hash"), name, "hash", &out[..n], &hdr[FIXED..], m, IMAGE_LEN as u64);
    let mut ok = false;
    let m = measure(|| ok = boot(image, hdr));
    s.kat_bytes(&id(alg, "boot"), name, "boot", verdict(ok), ACCEPT, m, IMAGE_LEN as u64);
    let bad = black_box(tampered());
    let m = measure(|| ok = boot(bad, hdr));
    s.kat(&id(alg, "tampered"), name, "reject", verdict(ok), REJECT, m);
    let m = measure(|| hash(black_box(b"abc"), &mut out[..n]));
    s.kat(&id(alg, "fips-abc"), name, "hash", &out[..n], abc, m);
}

/// What a signature row signs and checks: header, signature, key, the image's hash function and
/// the digest made at build time.
struct Signed<'a> {
    hdr: &'a [u8],
    sig: &'a [u8],
    key: &'a [u8],
    hash: fn(&[u8], &mut [u8]),
    digest: &'a [u8],
}

fn signed<'a>(hdr: &'a [u8], sig: &'a [u8], key: &'a [u8]) -> Signed<'a> {
    Signed { hdr, sig, key, hash: sha256_into, digest: &SHA256_DIGEST }
}

/// KATs of one signature row: hash, verify over the digest, the whole path, the tampered image.
fn sig_row(
    s: &mut Session,
    alg: &str,
    name: &str,
    boot: impl Fn(&[u8], &[u8], &[u8], &[u8]) -> bool,
    verify: impl Fn(&[u8], &[u8], &[u8]) -> bool,
    signed: Signed<'_>,
) {
    let Signed { hdr, sig, key, hash, digest: expected } = signed;
    let (image, hdr, sig, key) = (black_box(&sb_image[..]), black_box(hdr), black_box(sig), black_box(key));
    let mut buf = [0u8; 64];
    let digest = &mut buf[..expected.len()];
    let m = measure(|| hash(image, digest));
    s.kat_bytes(&id(alg, "hash"), name, "hash", digest, expected, m, IMAGE_LEN as u64);
    let mut ok = false;
    let d = black_box(expected);
    let m = measure(|| ok = verify(key, d, sig));
    s.kat(&id(alg, "verify"), name, "verify", verdict(ok), ACCEPT, m);
    let m = measure(|| ok = boot(image, hdr, sig, key));
    s.kat_bytes(&id(alg, "boot"), name, "boot", verdict(ok), ACCEPT, m, IMAGE_LEN as u64);
    let bad = black_box(tampered());
    let m = measure(|| ok = boot(bad, hdr, sig, key));
    s.kat(&id(alg, "tampered"), name, "reject", verdict(ok), REJECT, m);
}

/// Largest hybrid signature (ML-DSA-87 + ECDSA P-521): RAM copies with one part corrupted.
const HYBRID_SIG_MAX: usize = ML_DSA_87_SIG + 132;
static mut HYBRID_BAD: [u8; HYBRID_SIG_MAX] = [0; HYBRID_SIG_MAX];

/// A hybrid row: the signature row's KATs, then the image with only the ML-DSA part of the
/// signature corrupted, and only the ECDSA part: each must be rejected (both must verify).
fn hybrid_row(
    s: &mut Session,
    alg: &str,
    name: &str,
    boot: impl Fn(&[u8], &[u8], &[u8], &[u8]) -> bool,
    verify: impl Fn(&[u8], &[u8], &[u8]) -> bool,
    signed: Signed<'_>,
    ml_sig: usize,
) {
    let (hdr, sig, key) = (signed.hdr, signed.sig, signed.key);
    sig_row(s, alg, name, &boot, verify, signed);
    for (what, at) in [("tampered-ml-dsa", ml_sig / 2), ("tampered-ecdsa", ml_sig + 8)] {
        // SAFETY: single-threaded; nothing else holds HYBRID_BAD.
        let bad = unsafe { &mut (&mut *core::ptr::addr_of_mut!(HYBRID_BAD))[..sig.len()] };
        bad.copy_from_slice(sig);
        bad[at] ^= 0x01;
        let bad = black_box(&*bad);
        let mut ok = false;
        let m = measure(|| ok = boot(black_box(&sb_image[..]), hdr, bad, key));
        s.kat(&id(alg, what), name, "reject", verdict(ok), REJECT, m);
    }
}

/// An ACVP ML-DSA sigVer case: ML-DSA.Verify_internal over the vector's message.
fn acvp_ml_dsa<P: ml_dsa::MlDsaParams>(key: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    let (Ok(key), Ok(sig)) =
        (<&ml_dsa::EncodedVerifyingKey<P>>::try_from(key), <&ml_dsa::EncodedSignature<P>>::try_from(sig))
    else {
        return false;
    };
    let Some(sig) = ml_dsa::Signature::<P>::decode(sig) else { return false };
    ml_dsa::VerifyingKey::<P>::decode(key).verify_internal(msg, &sig)
}

/// An ACVP SLH-DSA sigVer case: slh_verify_internal over the vector's message.
fn acvp_slh_dsa<P: slh_dsa::ParameterSet>(key: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    let (Ok(vk), Ok(sig)) = (slh_dsa::VerifyingKey::<P>::try_from(key), slh_dsa::Signature::<P>::try_from(sig)) else {
        return false;
    };
    vk.slh_verify_internal(&[msg], &sig).is_ok()
}

/// `<alg>/<what>` in a fixed buffer (ids are short).
fn id(alg: &str, what: &str) -> IdBuf {
    let mut b = IdBuf { buf: [0; 48], len: 0 };
    for part in [alg.as_bytes(), b"/", what.as_bytes()] {
        b.buf[b.len..b.len + part.len()].copy_from_slice(part);
        b.len += part.len();
    }
    b
}

struct IdBuf {
    buf: [u8; 48],
    len: usize,
}

impl core::ops::Deref for IdBuf {
    type Target = str;
    fn deref(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("?")
    }
}

fn sha256_into(m: &[u8], out: &mut [u8]) {
    out.copy_from_slice(&sha2::Sha256::digest(m));
}
fn sha384_into(m: &[u8], out: &mut [u8]) {
    out.copy_from_slice(&sha2::Sha384::digest(m));
}
fn sha512_into(m: &[u8], out: &mut [u8]) {
    out.copy_from_slice(&sha2::Sha512::digest(m));
}
fn sha3_256_into(m: &[u8], out: &mut [u8]) {
    out.copy_from_slice(&sha3::Sha3_256::digest(m));
}

#[entry]
fn main() -> ! {
    // SAFETY: called once, before any allocation; the arena is used by nothing else.
    unsafe { HEAP.inner().init(core::ptr::addr_of_mut!(HEAP_MEM) as usize, HEAP_ARENA) }
    let mut s = Session::begin("secure-boot");
    // SAFETY: nothing reads TAMPERED before this; single-threaded.
    unsafe {
        let t = &mut *core::ptr::addr_of_mut!(TAMPERED);
        t.copy_from_slice(&sb_image);
        t[TAMPER_AT] ^= 0x01;
    }

    hash_row(
        &mut s,
        "sha256",
        "SHA-256",
        |m, o| sha256_into(m, o),
        |i, h| sb_boot_sha256(i, h),
        &sb_hdr_sha256,
        &SHA256_ABC,
    );
    hash_row(
        &mut s,
        "sha384",
        "SHA-384",
        |m, o| sha384_into(m, o),
        |i, h| sb_boot_sha384(i, h),
        &sb_hdr_sha384,
        &SHA384_ABC,
    );
    hash_row(
        &mut s,
        "sha3_256",
        "SHA3-256",
        |m, o| sha3_256_into(m, o),
        |i, h| sb_boot_sha3_256(i, h),
        &sb_hdr_sha3_256,
        &SHA3_256_ABC,
    );

    sig_row(
        &mut s,
        "ecdsa_p256",
        "ECDSA-P256",
        |i, h, g, k| sb_boot_ecdsa_p256(i, h, g, k),
        |k, d, g| verify_p256(k, d, g),
        signed(&sb_hdr_ecdsa_p256, &sb_sig_ecdsa_p256, &sb_key_ecdsa_p256),
    );
    let mut ok = false;
    let m = measure(|| ok = verify_p256(black_box(&CAVP_P256_Q), black_box(&CAVP_P256_M), black_box(&CAVP_P256_RS)));
    s.kat("ecdsa_p256/cavp-1", "ECDSA-P256", "verify", verdict(ok), ACCEPT, m);

    sig_row(
        &mut s,
        "ecdsa_p384",
        "ECDSA-P384",
        |i, h, g, k| sb_boot_ecdsa_p384(i, h, g, k),
        |k, d, g| verify_p384(k, d, g),
        Signed {
            hash: sha384_into,
            digest: &SHA384_DIGEST,
            ..signed(&sb_hdr_ecdsa_p384, &sb_sig_ecdsa_p384, &sb_key_ecdsa_p384)
        },
    );
    let m = measure(|| ok = verify_p384(black_box(&CAVP_P384_Q), black_box(&CAVP_P384_M), black_box(&CAVP_P384_RS)));
    s.kat("ecdsa_p384/cavp-1", "ECDSA-P384", "verify", verdict(ok), ACCEPT, m);

    sig_row(
        &mut s,
        "ed25519",
        "Ed25519",
        |i, h, g, k| sb_boot_ed25519(i, h, g, k),
        |k, d, g| verify_ed25519(k, d, g),
        signed(&sb_hdr_ed25519, &sb_sig_ed25519, &sb_key_ed25519),
    );
    let m = measure(|| ok = verify_ed25519(black_box(&RFC8032_T1_KEY), black_box(b""), black_box(&RFC8032_T1_SIG)));
    s.kat("ed25519/rfc8032-1", "Ed25519", "verify", verdict(ok), ACCEPT, m);

    sig_row(
        &mut s,
        "ml_dsa_44",
        "ML-DSA-44",
        |i, h, g, k| sb_boot_ml_dsa_44(i, h, g, k),
        |k, d, g| verify_ml_dsa::<ml_dsa::MlDsa44>(k, d, g),
        signed(&sb_hdr_ml_dsa_44, &sb_sig_ml_dsa_44, &sb_key_ml_dsa_44),
    );
    sig_row(
        &mut s,
        "ml_dsa_65",
        "ML-DSA-65",
        |i, h, g, k| sb_boot_ml_dsa_65(i, h, g, k),
        |k, d, g| verify_ml_dsa::<ml_dsa::MlDsa65>(k, d, g),
        signed(&sb_hdr_ml_dsa_65, &sb_sig_ml_dsa_65, &sb_key_ml_dsa_65),
    );
    sig_row(
        &mut s,
        "ml_dsa_87",
        "ML-DSA-87",
        |i, h, g, k| sb_boot_ml_dsa_87(i, h, g, k),
        |k, d, g| verify_ml_dsa::<ml_dsa::MlDsa87>(k, d, g),
        signed(&sb_hdr_ml_dsa_87, &sb_sig_ml_dsa_87, &sb_key_ml_dsa_87),
    );
    for (name, pk, msg, sig) in [
        ("ml_dsa_44/acvp-sigver", &ACVP_ML_DSA_44_PK[..], &ACVP_ML_DSA_44_MSG[..], &ACVP_ML_DSA_44_SIG[..]),
        ("ml_dsa_65/acvp-sigver", &ACVP_ML_DSA_65_PK, &ACVP_ML_DSA_65_MSG, &ACVP_ML_DSA_65_SIG),
        ("ml_dsa_87/acvp-sigver", &ACVP_ML_DSA_87_PK, &ACVP_ML_DSA_87_MSG, &ACVP_ML_DSA_87_SIG),
    ] {
        let (pk, msg, sig) = (black_box(pk), black_box(msg), black_box(sig));
        let m = match pk.len() {
            1312 => measure(|| ok = acvp_ml_dsa::<ml_dsa::MlDsa44>(pk, msg, sig)),
            1952 => measure(|| ok = acvp_ml_dsa::<ml_dsa::MlDsa65>(pk, msg, sig)),
            _ => measure(|| ok = acvp_ml_dsa::<ml_dsa::MlDsa87>(pk, msg, sig)),
        };
        s.kat(name, "ML-DSA", "verify", verdict(ok), ACCEPT, m);
    }

    sig_row(
        &mut s,
        "ecdsa_p521",
        "ECDSA-P521",
        |i, h, g, k| sb_boot_ecdsa_p521(i, h, g, k),
        |k, d, g| verify_p521(k, d, g),
        Signed {
            hash: sha512_into,
            digest: &SHA512_DIGEST,
            ..signed(&sb_hdr_ecdsa_p521, &sb_sig_ecdsa_p521, &sb_key_ecdsa_p521)
        },
    );
    let m = measure(|| ok = verify_p521(black_box(&CAVP_P521_Q), black_box(&CAVP_P521_M), black_box(&CAVP_P521_RS)));
    s.kat("ecdsa_p521/cavp-1", "ECDSA-P521", "verify", verdict(ok), ACCEPT, m);
    let mut out = [0u8; 64];
    let m = measure(|| sha512_into(black_box(b"abc"), &mut out));
    s.kat("ecdsa_p521/fips-abc", "ECDSA-P521", "hash", &out, &SHA512_ABC, m);

    sig_row(
        &mut s,
        "ed448",
        "Ed448",
        |i, h, g, k| sb_boot_ed448(i, h, g, k),
        |k, d, g| verify_ed448(k, d, g),
        Signed { hash: sha512_into, digest: &SHA512_DIGEST, ..signed(&sb_hdr_ed448, &sb_sig_ed448, &sb_key_ed448) },
    );
    let m = measure(|| {
        ok = verify_ed448(black_box(&RFC8032_ED448_BLANK_KEY), black_box(b""), black_box(&RFC8032_ED448_BLANK_SIG))
    });
    s.kat("ed448/rfc8032-blank", "Ed448", "verify", verdict(ok), ACCEPT, m);

    sig_row(
        &mut s,
        "rsa_2048",
        "RSA-2048",
        |i, h, g, k| sb_boot_rsa_2048(i, h, g, k),
        |k, d, g| verify_rsa(k, d, g),
        signed(&sb_hdr_rsa_2048, &sb_sig_rsa_2048, &sb_key_rsa_2048),
    );
    let m = measure(|| {
        let d = sha2::Sha256::digest(black_box(b"Test"));
        ok = verify_rsa(black_box(&WYCHEPROOF_RSA2048_T3_KEY), &d, black_box(&WYCHEPROOF_RSA2048_T3_SIG))
    });
    s.kat("rsa_2048/wycheproof-3", "RSA-2048", "verify", verdict(ok), ACCEPT, m);
    sig_row(
        &mut s,
        "rsa_3072",
        "RSA-3072",
        |i, h, g, k| sb_boot_rsa_3072(i, h, g, k),
        |k, d, g| verify_rsa(k, d, g),
        signed(&sb_hdr_rsa_3072, &sb_sig_rsa_3072, &sb_key_rsa_3072),
    );
    sig_row(
        &mut s,
        "rsa_4096",
        "RSA-4096",
        |i, h, g, k| sb_boot_rsa_4096(i, h, g, k),
        |k, d, g| verify_rsa(k, d, g),
        signed(&sb_hdr_rsa_4096, &sb_sig_rsa_4096, &sb_key_rsa_4096),
    );

    sig_row(
        &mut s,
        "slh_dsa_sha2_128s",
        "SLH-DSA-SHA2-128s",
        |i, h, g, k| sb_boot_slh_dsa_sha2_128s(i, h, g, k),
        |k, d, g| verify_slh_dsa::<slh_dsa::Sha2_128s>(k, d, g),
        signed(&sb_hdr_slh_dsa_sha2_128s, &sb_sig_slh_dsa_sha2_128s, &sb_key_slh_dsa_sha2_128s),
    );
    let m = measure(|| {
        ok = acvp_slh_dsa::<slh_dsa::Sha2_192s>(
            black_box(&ACVP_SLH_DSA_SHA2_192S_PK),
            black_box(&ACVP_SLH_DSA_SHA2_192S_MSG),
            black_box(&ACVP_SLH_DSA_SHA2_192S_SIG),
        )
    });
    s.kat("slh_dsa_sha2_128s/acvp-sigver-sha2-192s", "SLH-DSA", "verify", verdict(ok), ACCEPT, m);
    // The row's own parameter set: NIST's SHA2-128s signature (ACVP sigGen tcId 157), pure
    // SLH-DSA with the vector's context, through the boot path's verifier.
    let m = measure(|| {
        ok = verify_slh_dsa_ctx::<slh_dsa::Sha2_128s>(
            black_box(&ACVP_SLH_DSA_SHA2_128S_PK),
            black_box(&ACVP_SLH_DSA_SHA2_128S_MSG),
            black_box(&ACVP_SLH_DSA_SHA2_128S_CTX),
            black_box(&ACVP_SLH_DSA_SHA2_128S_SIG),
        )
    });
    s.kat("slh_dsa_sha2_128s/acvp-siggen-157", "SLH-DSA", "verify", verdict(ok), ACCEPT, m);

    hybrid_row(
        &mut s,
        "ml_dsa_65_ecdsa_p384",
        "ML-DSA-65/ECDSA-P384",
        |i, h, g, k| sb_boot_ml_dsa_65_ecdsa_p384(i, h, g, k),
        |k, d, g| verify_ml_dsa_65_p384(k, d, g),
        Signed {
            hash: sha384_into,
            digest: &SHA384_DIGEST,
            ..signed(&sb_hdr_ml_dsa_65_ecdsa_p384, &sb_sig_ml_dsa_65_ecdsa_p384, &sb_key_ml_dsa_65_ecdsa_p384)
        },
        ML_DSA_65_SIG,
    );
    hybrid_row(
        &mut s,
        "ml_dsa_87_ecdsa_p521",
        "ML-DSA-87/ECDSA-P521",
        |i, h, g, k| sb_boot_ml_dsa_87_ecdsa_p521(i, h, g, k),
        |k, d, g| verify_ml_dsa_87_p521(k, d, g),
        Signed {
            hash: sha512_into,
            digest: &SHA512_DIGEST,
            ..signed(&sb_hdr_ml_dsa_87_ecdsa_p521, &sb_sig_ml_dsa_87_ecdsa_p521, &sb_key_ml_dsa_87_ecdsa_p521)
        },
        ML_DSA_87_SIG,
    );

    // Stateful hash-based signatures: HSS/LMS with one level (H10, W8) and XMSS-SHA2_10_256.
    sig_row(
        &mut s,
        "lms_h10_w8",
        "LMS-H10-W8",
        |i, h, g, k| sb_boot_lms_h10_w8(i, h, g, k),
        |k, d, g| lms::hss_verify(k, d, g),
        signed(&sb_hdr_lms_h10_w8, &sb_sig_lms_h10_w8, &sb_key_lms_h10_w8),
    );
    for (name, pk, msg, sig) in [
        ("lms_h10_w8/rfc8554-tc1", &RFC8554_TC1_PK[..], &RFC8554_TC1_MSG[..], &RFC8554_TC1_SIG[..]),
        ("lms_h10_w8/rfc8554-tc2", &RFC8554_TC2_PK, &RFC8554_TC2_MSG, &RFC8554_TC2_SIG),
    ] {
        let m = measure(|| ok = lms::hss_verify(black_box(pk), black_box(msg), black_box(sig)));
        s.kat(name, "HSS/LMS", "verify", verdict(ok), ACCEPT, m);
    }
    sig_row(
        &mut s,
        "xmss_sha2_10_256",
        "XMSS-SHA2_10_256",
        |i, h, g, k| sb_boot_xmss_sha2_10_256(i, h, g, k),
        |k, d, g| xmss::verify(k, d, g),
        signed(&sb_hdr_xmss_sha2_10_256, &sb_sig_xmss_sha2_10_256, &sb_key_xmss_sha2_10_256),
    );
    let m = measure(|| {
        ok = xmss::verify(
            black_box(&LIBOQS_XMSS_KAT0_PK),
            black_box(&LIBOQS_XMSS_KAT0_MSG),
            black_box(&LIBOQS_XMSS_KAT0_SIG),
        )
    });
    s.kat("xmss_sha2_10_256/ref-kat-0", "XMSS-SHA2_10_256", "verify", verdict(ok), ACCEPT, m);

    // Hash-only rows with assembly. They stay after every other row: built without wolfSSL's
    // source, their first KAT panics (src/asm.rs), and the rows before them are reported.
    // The same KATs (FIPS 180-4 / FIPS 202 "abc" included), and the
    // 448-bit and 896-bit examples (`<row>/fips-448`, `sha384_asm/fips-896`): for SHA-2 their
    // padding takes a second block, a path neither "abc" nor the 100 KiB image takes.
    hash_row(
        &mut s,
        "sha256_asm",
        "SHA-256-asm",
        |m, o| o.copy_from_slice(&asm::sha256(m)),
        |i, h| sb_boot_sha256_asm(i, h),
        &sb_hdr_sha256_asm,
        &SHA256_ABC,
    );
    let mut d = [0u8; 32];
    let m = measure(|| d = asm::sha256(black_box(&MSG_448)));
    s.kat("sha256_asm/fips-448", "SHA-256-asm", "hash", &d, &SHA256_448, m);
    hash_row(
        &mut s,
        "sha384_asm",
        "SHA-384-asm",
        |m, o| o.copy_from_slice(&asm::sha384(m)),
        |i, h| sb_boot_sha384_asm(i, h),
        &sb_hdr_sha384_asm,
        &SHA384_ABC,
    );
    let mut d = [0u8; 48];
    let m = measure(|| d = asm::sha384(black_box(&MSG_896)));
    s.kat("sha384_asm/fips-896", "SHA-384-asm", "hash", &d, &SHA384_896, m);
    hash_row(
        &mut s,
        "sha3_256_asm",
        "SHA3-256-asm",
        |m, o| o.copy_from_slice(&asm::sha3_256(m)),
        |i, h| sb_boot_sha3_256_asm(i, h),
        &sb_hdr_sha3_256_asm,
        &SHA3_256_ABC,
    );
    let mut d = [0u8; 32];
    let m = measure(|| d = asm::sha3_256(black_box(&MSG_448)));
    s.kat("sha3_256_asm/fips-448", "SHA3-256-asm", "hash", &d, &SHA3_256_448, m);
    s.end()
}
