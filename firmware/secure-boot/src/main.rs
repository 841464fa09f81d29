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
//! fails closed), and official vectors (`<alg>/rfc8032-1`, `<alg>/cavp-1`, `<alg>/fips-abc`).

#![no_std]
#![no_main]

use core::hint::black_box;
use ed25519_dalek::Verifier as _;
use mcubench_support::{Session, entry, measure};
use p256::ecdsa::signature::hazmat::PrehashVerifier;
use sha2::Digest as _;

include!(concat!(env!("OUT_DIR"), "/signed.rs"));

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
    let mut buf = [0u8; 48];
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
fn sha3_256_into(m: &[u8], out: &mut [u8]) {
    out.copy_from_slice(&sha3::Sha3_256::digest(m));
}

#[entry]
fn main() -> ! {
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
    s.end()
}
