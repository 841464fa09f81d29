//! Throughput firmware: cycles per byte of hashes, AES modes and AEADs over messages of 16 B to
//! 16 KiB, and cycles per operation of signatures and key exchange, on RustCrypto crates. Every
//! measured operation is a known-answer test: its output is compared with the expected value.
//!
//! KAT ids, which the host's throughput and profile tables read (docs/src/guide/throughput.md):
//! - `<alg>/<size>` (`sha256/1KiB`), with `bytes=` the message length: one call over a message
//!   in RAM (key setup outside the measurement). Expected: `src/vectors.rs`, made by
//!   `vectors/gen.py` with Python's hashlib and pyca/cryptography (OpenSSL), an implementation
//!   independent of the measured one.
//! - `<alg>/<vector>` (`aes128_cbc/sp800-38a-f21`): an official vector (source on each call).
//! - `<scheme>/<op>` (`ed25519/sign`): one operation of a signature or key-exchange scheme, on
//!   an official vector (RFC 8032, RFC 7748, RFC 6979, RFC 5903).
//!
//! - `ml_dsa_<set>/<op>` (`ml_dsa_44/sign`): ML-DSA keygen, sign and verify from RustCrypto's
//!   `ml-dsa` or from `fips204` (`src/mldsa.rs`), each on a NIST ACVP vector.
//!
//! Algorithm groups are cargo features (`hashes`, `ciphers`, `curve25519`, `p256`, `ml-dsa` or
//! `fips204` with `ml-dsa-44`/`-65`/`-87`) so that a scenario builds only what it shows.

#![no_std]
#![no_main]
// Without features (e.g. a plain `cargo build` of the firmware workspace) it measures nothing.
#![cfg_attr(
    not(any(feature = "hashes", feature = "ciphers", feature = "curve25519", feature = "p256", feature = "ml-dsa", feature = "fips204")),
    allow(unused)
)]

#[cfg(any(feature = "hashes", feature = "ciphers", feature = "curve25519", feature = "p256"))]
use core::hint::black_box;
use mcubench_support::{Session, entry};
#[cfg(any(feature = "hashes", feature = "ciphers", feature = "curve25519", feature = "p256"))]
use mcubench_support::measure;

#[allow(dead_code)]
mod vectors;
#[cfg(any(feature = "ml-dsa", feature = "fips204"))]
mod mldsa;

/// Largest message.
#[cfg(any(feature = "hashes", feature = "ciphers"))]
const MAX: usize = 16 * 1024;

/// The message (byte i is i mod 251, as vectors/gen.py makes it) and a work buffer, in RAM
/// where a real application's data is.
#[cfg(any(feature = "hashes", feature = "ciphers"))]
static mut MSG: [u8; MAX] = [0; MAX];
#[cfg(feature = "ciphers")]
static mut BUF: [u8; MAX] = [0; MAX];

#[cfg(any(feature = "hashes", feature = "ciphers"))]
fn msg(n: usize) -> &'static [u8] {
    // SAFETY: single-threaded; written once at the start of main.
    unsafe { &(&*core::ptr::addr_of!(MSG))[..n] }
}

#[cfg(feature = "ciphers")]
/// The work buffer holding a copy of the first `n` message bytes (copied outside measurements).
fn buf_with_msg(n: usize) -> &'static mut [u8] {
    // SAFETY: single-threaded; one borrow at a time (each KAT takes it and drops it).
    let b = unsafe { &mut (&mut *core::ptr::addr_of_mut!(BUF))[..n] };
    b.copy_from_slice(msg(n));
    b
}

/// `16B`, `1KiB`: the size part of a KAT id.
#[cfg(any(feature = "hashes", feature = "ciphers"))]
fn size_label(n: usize, out: &mut IdBuf) {
    let (v, unit) = if n >= 1024 && n % 1024 == 0 { (n / 1024, "KiB") } else { (n, "B") };
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    let mut v = v;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.push(&digits[i..]);
    out.push(unit.as_bytes());
}

/// `<alg>/<what>` in a fixed buffer (ids are short).
#[cfg(any(feature = "hashes", feature = "ciphers"))]
struct IdBuf {
    buf: [u8; 48],
    len: usize,
}

#[cfg(any(feature = "hashes", feature = "ciphers"))]
impl IdBuf {
    fn new(alg: &str) -> IdBuf {
        let mut b = IdBuf { buf: [0; 48], len: 0 };
        b.push(alg.as_bytes());
        b.push(b"/");
        b
    }
    fn push(&mut self, part: &[u8]) {
        self.buf[self.len..self.len + part.len()].copy_from_slice(part);
        self.len += part.len();
    }
}

#[cfg(any(feature = "hashes", feature = "ciphers"))]
impl core::ops::Deref for IdBuf {
    type Target = str;
    fn deref(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("?")
    }
}

#[cfg(any(feature = "hashes", feature = "ciphers"))]
fn expected(alg: &str, n: usize) -> &'static [u8] {
    vectors::SIZED.iter().find(|(a, m, _)| *a == alg && *m == n).map_or(&[], |(_, _, e)| e)
}

#[cfg(any(feature = "hashes", feature = "ciphers"))]
/// One `<alg>/<size>` KAT per message size: `op(message, out)` runs measured, writes the output
/// to compare into `out` and returns its length.
fn sized(s: &mut Session, alg: &str, name: &str, op_name: &str, mut op: impl FnMut(usize, &mut [u8]) -> usize) {
    for n in vectors::SIZES {
        let mut id = IdBuf::new(alg);
        size_label(n, &mut id);
        let mut out = [0u8; 64];
        let mut len = 0;
        let m = measure(|| len = op(black_box(n), &mut out));
        s.kat_bytes(&id, name, op_name, &out[..len], expected(alg, n), m, n as u64);
    }
}

#[cfg(any(feature = "curve25519", feature = "p256", feature = "ml-dsa", feature = "fips204"))]
const ACCEPT: &[u8] = &[1];

#[cfg(feature = "hashes")]
mod hashes {
    use super::*;
    use shake::XofReader as _;

    fn digest<D: sha2::Digest>(m: &[u8], out: &mut [u8]) -> usize {
        let d = D::digest(m);
        out[..d.len()].copy_from_slice(&d);
        d.len()
    }

    fn xof<X: Default + shake::Update + shake::ExtendableOutput>(m: &[u8], out: &mut [u8]) -> usize {
        let mut x = X::default();
        x.update(m);
        x.finalize_xof().read(&mut out[..32]);
        32
    }

    pub fn run(s: &mut Session) {
        sized(s, "sha256", "SHA-256", "hash", |n, o| digest::<sha2::Sha256>(msg(n), o));
        sized(s, "sha512", "SHA-512", "hash", |n, o| digest::<sha2::Sha512>(msg(n), o));
        sized(s, "sha3_256", "SHA3-256", "hash", |n, o| digest::<sha3::Sha3_256>(msg(n), o));
        sized(s, "shake128", "SHAKE128", "xof", |n, o| xof::<shake::Shake128>(msg(n), o));
        sized(s, "shake256", "SHAKE256", "xof", |n, o| xof::<shake::Shake256>(msg(n), o));
        // Official vectors: FIPS 180-2 B.1 / C.1 ("abc"), FIPS 202 examples.
        let mut out = [0u8; 64];
        let m = measure(|| {
            digest::<sha2::Sha256>(black_box(b"abc"), &mut out);
        });
        s.kat("sha256/fips180-abc", "SHA-256", "hash", &out[..32], &vectors::SHA256_ABC, m);
        let m = measure(|| {
            digest::<sha2::Sha512>(black_box(b"abc"), &mut out);
        });
        s.kat("sha512/fips180-abc", "SHA-512", "hash", &out, &vectors::SHA512_ABC, m);
        let m = measure(|| {
            digest::<sha3::Sha3_256>(black_box(b"abc"), &mut out);
        });
        s.kat("sha3_256/fips202-abc", "SHA3-256", "hash", &out[..32], &vectors::SHA3_256_ABC, m);
        let m = measure(|| {
            xof::<shake::Shake128>(black_box(b""), &mut out);
        });
        s.kat("shake128/fips202-empty", "SHAKE128", "xof", &out[..32], &vectors::SHAKE128_EMPTY, m);
        let m = measure(|| {
            xof::<shake::Shake256>(black_box(b""), &mut out);
        });
        s.kat("shake256/fips202-empty", "SHAKE256", "xof", &out[..32], &vectors::SHAKE256_EMPTY, m);
    }
}

#[cfg(feature = "ciphers")]
mod ciphers {
    use super::*;
    use aes::cipher::{Array, BlockModeEncrypt as _, InnerIvInit as _, KeyInit as _, StreamCipher as _};

    type Block = Array<u8, aes::cipher::consts::U16>;

    fn blocks(b: &mut [u8]) -> &mut [Block] {
        Array::slice_as_chunks_mut(b).0
    }

    /// CBC over whole blocks; `out`: the last ciphertext block (it depends on every block).
    fn cbc(aes: &aes::Aes128, iv: &[u8; 16], data: &mut [u8], out: &mut [u8]) -> usize {
        cbc::Encryptor::<aes::Aes128>::inner_iv_init(aes.clone(), iv.into()).encrypt_blocks(blocks(data));
        out[..16].copy_from_slice(&data[data.len() - 16..]);
        16
    }

    fn ctr(aes: &aes::Aes128, iv: &[u8; 16], data: &mut [u8], out: &mut [u8]) -> usize {
        ctr::Ctr128BE::<aes::Aes128>::from_core(ctr::CtrCore::inner_iv_init(aes.clone(), iv.into()))
            .apply_keystream(data);
        out[..16].copy_from_slice(&data[data.len() - 16..]);
        16
    }

    fn seal<A: aes_gcm::aead::AeadInOut>(a: &A, nonce: &[u8], aad: &[u8], data: &mut [u8], out: &mut [u8]) -> usize {
        let Ok(nonce) = <&aes_gcm::aead::Nonce<A>>::try_from(nonce) else { return 0 };
        match a.encrypt_inout_detached(nonce, aad, data.into()) {
            Ok(tag) => {
                out[..tag.len()].copy_from_slice(&tag);
                tag.len()
            }
            Err(_) => 0,
        }
    }

    pub fn run(s: &mut Session) {
        // Keys are set up once, outside the measurements (the key schedule is not per message).
        let aes = aes::Aes128::new(&vectors::AES_KEY.into());
        let gcm = aes_gcm::Aes128Gcm::new(&vectors::AES_KEY.into());
        let chacha = chacha20poly1305::ChaCha20Poly1305::new(&vectors::CHACHA_KEY.into());
        sized(s, "aes128_cbc", "AES-128-CBC", "encrypt", |n, o| cbc(&aes, &vectors::CBC_IV, buf_with_msg(n), o));
        sized(s, "aes128_ctr", "AES-128-CTR", "encrypt", |n, o| ctr(&aes, &vectors::CTR_IV, buf_with_msg(n), o));
        sized(s, "aes128_gcm", "AES-128-GCM", "seal", |n, o| seal(&gcm, &vectors::GCM_NONCE, &[], buf_with_msg(n), o));
        sized(s, "chacha20poly1305", "ChaCha20-Poly1305", "seal", |n, o| {
            seal(&chacha, &vectors::CHACHA_NONCE, &[], buf_with_msg(n), o)
        });

        // Official vectors. The whole ciphertext is compared (CBC, CTR), or ciphertext and tag.
        let mut data = vectors::SP800_38A_PT;
        let mut out = [0u8; 16];
        let m = measure(|| {
            cbc(&aes, &vectors::CBC_IV, black_box(&mut data), &mut out);
        });
        s.kat("aes128_cbc/sp800-38a-f21", "AES-128-CBC", "encrypt", &data, &vectors::CBC_CT, m);
        let mut data = vectors::SP800_38A_PT;
        let m = measure(|| {
            ctr(&aes, &vectors::CTR_IV, black_box(&mut data), &mut out);
        });
        s.kat("aes128_ctr/sp800-38a-f51", "AES-128-CTR", "encrypt", &data, &vectors::CTR_CT, m);
        // McGrew & Viega GCM test case 2: zero key, zero nonce, one zero block.
        let zero = aes_gcm::Aes128Gcm::new(&[0u8; 16].into());
        let mut data = [0u8; 32];
        let m = measure(|| {
            let (ct, tag) = data.split_at_mut(16);
            seal(&zero, &[0u8; 12], &[], black_box(ct), tag);
        });
        let mut expected = [0u8; 32];
        expected[..16].copy_from_slice(&vectors::GCM_TC2_CT);
        expected[16..].copy_from_slice(&vectors::GCM_TC2_TAG);
        s.kat("aes128_gcm/gcm-tc2", "AES-128-GCM", "seal", &data, &expected, m);
        // RFC 8439 2.8.2: the tag over the whole sunscreen message with its AAD.
        let mut data = vectors::CHACHA_PT;
        let m = measure(|| {
            seal(&chacha, &vectors::CHACHA_NONCE, &vectors::CHACHA_AAD, black_box(&mut data), &mut out);
        });
        s.kat("chacha20poly1305/rfc8439-282", "ChaCha20-Poly1305", "seal", &out, &vectors::CHACHA_TAG, m);
    }
}

#[cfg(feature = "curve25519")]
mod curve25519 {
    use super::*;
    use curve25519_dalek::montgomery::MontgomeryPoint;
    use ed25519_dalek::{Signer as _, Verifier as _};

    pub fn run(s: &mut Session) {
        // Ed25519, RFC 8032 7.1 TEST 1: key from the secret (keygen), sign the empty message,
        // verify the RFC's signature.
        let mut pk = [0u8; 32];
        let m = measure(|| {
            pk = ed25519_dalek::SigningKey::from_bytes(black_box(&vectors::ED_SK)).verifying_key().to_bytes()
        });
        s.kat("ed25519/keygen", "Ed25519", "keygen", &pk, &vectors::ED_PK, m);
        let sk = ed25519_dalek::SigningKey::from_bytes(&vectors::ED_SK);
        let mut sig = [0u8; 64];
        let m = measure(|| sig = sk.sign(black_box(b"")).to_bytes());
        s.kat("ed25519/sign", "Ed25519", "sign", &sig, &vectors::ED_SIG, m);
        let vk = sk.verifying_key();
        let rfc_sig = ed25519_dalek::Signature::from_bytes(&vectors::ED_SIG);
        let mut ok = false;
        let m = measure(|| ok = vk.verify(black_box(b""), black_box(&rfc_sig)).is_ok());
        s.kat("ed25519/verify", "Ed25519", "verify", &[ok as u8], ACCEPT, m);

        // X25519, RFC 7748 6.1: Alice's public key, the shared secret with Bob's.
        let mut out = [0u8; 32];
        let m = measure(|| out = MontgomeryPoint::mul_base_clamped(black_box(vectors::X_A_SK)).to_bytes());
        s.kat("x25519/keygen", "X25519", "keygen", &out, &vectors::X_A_PK, m);
        let m = measure(|| {
            out = MontgomeryPoint(black_box(vectors::X_B_PK)).mul_clamped(black_box(vectors::X_A_SK)).to_bytes()
        });
        s.kat("x25519/shared", "X25519", "shared", &out, &vectors::X_SHARED, m);
    }
}

#[cfg(feature = "p256")]
mod nist_p256 {
    use super::*;
    use p256::ecdsa::signature::{Signer as _, Verifier as _};
    use p256::elliptic_curve::point::AffineCoordinates as _;

    pub fn run(s: &mut Session) {
        // ECDSA P-256 with SHA-256, RFC 6979 A.2.5 (message "sample", deterministic nonce).
        let mut u = [0u8; 65];
        let m = measure(|| {
            if let Ok(k) = p256::ecdsa::SigningKey::from_slice(black_box(&vectors::P256_X)) {
                u.copy_from_slice(k.verifying_key().to_sec1_point(false).as_bytes());
            }
        });
        s.kat("ecdsa_p256/keygen", "ECDSA-P256", "keygen", &u, &vectors::P256_U, m);
        let Ok(sk) = p256::ecdsa::SigningKey::from_slice(&vectors::P256_X) else { return };
        let mut sig = [0u8; 64];
        let m = measure(|| {
            let g: p256::ecdsa::Signature = sk.sign(black_box(b"sample"));
            sig.copy_from_slice(&g.to_bytes());
        });
        s.kat("ecdsa_p256/sign", "ECDSA-P256", "sign", &sig, &vectors::P256_SIG, m);
        let vk = *sk.verifying_key();
        let Ok(rfc_sig) = p256::ecdsa::Signature::from_slice(&vectors::P256_SIG) else { return };
        let mut ok = false;
        let m = measure(|| ok = vk.verify(black_box(b"sample"), black_box(&rfc_sig)).is_ok());
        s.kat("ecdsa_p256/verify", "ECDSA-P256", "verify", &[ok as u8], ACCEPT, m);

        // ECDH P-256, RFC 5903 8.1: the x coordinate of i·g^r.
        let Ok(peer) = p256::PublicKey::from_sec1_bytes(&vectors::ECDH_GR) else { return };
        let Ok(i) = p256::SecretKey::from_slice(&vectors::ECDH_I) else { return };
        let d = i.to_nonzero_scalar();
        let mut out = [0u8; 32];
        let m = measure(|| {
            let q = p256::ProjectivePoint::from(*black_box(&peer).as_affine());
            out.copy_from_slice(&(q * **black_box(&d)).to_affine().x());
        });
        s.kat("ecdh_p256/shared", "ECDH-P256", "shared", &out, &vectors::ECDH_GIR, m);
    }
}

#[entry]
fn main() -> ! {
    let mut s = Session::begin("throughput");
    // SAFETY: nothing reads MSG before this; single-threaded.
    #[cfg(any(feature = "hashes", feature = "ciphers"))]
    unsafe {
        for (i, b) in (*core::ptr::addr_of_mut!(MSG)).iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
    }
    #[cfg(feature = "hashes")]
    hashes::run(&mut s);
    #[cfg(feature = "ciphers")]
    ciphers::run(&mut s);
    #[cfg(feature = "curve25519")]
    curve25519::run(&mut s);
    #[cfg(feature = "p256")]
    nist_p256::run(&mut s);
    #[cfg(any(feature = "ml-dsa", feature = "fips204"))]
    mldsa::run(&mut s);
    s.end()
}
