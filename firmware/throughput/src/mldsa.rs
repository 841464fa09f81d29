//! ML-DSA (FIPS 204) key generation, signing and verification per parameter set, from one of two
//! implementations: RustCrypto's `ml-dsa` (feature `ml-dsa`) or integritychain's `fips204`
//! (feature `fips204`). Both report the same KAT ids (`ml_dsa_44/keygen`, `/sign`, `/verify`), so
//! a scenario's build profile picks the implementation and the profile table sets them side by
//! side. Parameter sets are features too (`ml-dsa-44`, `ml-dsa-65`, `ml-dsa-87`).
//!
//! Every operation starts from bytes and ends in bytes, as firmware holds keys and signatures:
//! - `keygen`: ML-DSA.KeyGen_internal(seed) to the encoded public key;
//! - `sign`: decode the expanded secret key, ML-DSA.Sign_internal(sk, M', rnd = 0^32) (the
//!   deterministic variant), encode the signature;
//! - `verify`: decode the public key and the signature, ML-DSA.Verify_internal(pk, M', sig).
//!
//! Each is a known-answer test on a NIST ACVP vector (keyGen, sigGen and sigVer, internal
//! interface; sources in `vectors/acvp-ml-dsa-*.txt` and
//! `../secure-boot/vectors/acvp-ml-dsa-*-sigver.txt`), so a profile that computes a wrong result
//! fails the run. Keys and signatures are compared whole in the firmware (the record carries 1
//! for a match).

use core::hint::black_box;
use mcubench_support::{Session, measure};

#[cfg(all(feature = "ml-dsa", feature = "fips204"))]
compile_error!("features `ml-dsa` and `fips204` are two implementations of the same KATs: enable one");

include!(concat!(env!("OUT_DIR"), "/ml_dsa_vectors.rs"));

/// One parameter set's ACVP vectors.
struct Vectors {
    seed: &'static [u8; 32],
    pk: &'static [u8],
    sk: &'static [u8],
    sign_msg: &'static [u8],
    sig: &'static [u8],
    verify_pk: &'static [u8],
    verify_msg: &'static [u8],
    verify_sig: &'static [u8],
}

/// The three operations of one implementation for one parameter set; each writes its output.
trait Scheme {
    /// Seed to encoded public key; returns its length.
    fn keygen(seed: &[u8; 32], pk: &mut [u8]) -> usize;
    /// Encoded secret key and message to encoded signature; returns its length (0: decoding failed).
    fn sign(sk: &[u8], msg: &[u8], sig: &mut [u8]) -> usize;
    fn verify(pk: &[u8], msg: &[u8], sig: &[u8]) -> bool;
}

/// Largest public key and signature (ML-DSA-87).
const PK_MAX: usize = 2592;
const SIG_MAX: usize = 4627;

/// Keys and signatures are longer than a `kat` record carries (`MAX_OUT`): the whole output is
/// compared with the vector here, and the record carries 1 when every byte matches.
fn matches(out: &[u8], expected: &[u8]) -> &'static [u8] {
    if out == expected { super::ACCEPT } else { &[0] }
}

fn kats<S: Scheme>(s: &mut Session, set: &str, name: &str, v: &Vectors) {
    let mut pk = [0u8; PK_MAX];
    let mut n = 0;
    let m = measure(|| n = S::keygen(black_box(v.seed), &mut pk));
    s.kat(&id(set, "keygen"), name, "keygen", matches(&pk[..n], v.pk), super::ACCEPT, m);
    let mut sig = [0u8; SIG_MAX];
    let m = measure(|| n = S::sign(black_box(v.sk), black_box(v.sign_msg), &mut sig));
    s.kat(&id(set, "sign"), name, "sign", matches(&sig[..n], v.sig), super::ACCEPT, m);
    let mut ok = false;
    let m = measure(|| ok = S::verify(black_box(v.verify_pk), black_box(v.verify_msg), black_box(v.verify_sig)));
    s.kat(&id(set, "verify"), name, "verify", &[ok as u8], super::ACCEPT, m);
}

/// `ml_dsa_44/keygen`: ids are short.
fn id(set: &str, op: &str) -> IdBuf {
    let mut b = IdBuf { buf: [0; 32], len: 0 };
    for part in [set.as_bytes(), b"/", op.as_bytes()] {
        b.buf[b.len..b.len + part.len()].copy_from_slice(part);
        b.len += part.len();
    }
    b
}

struct IdBuf {
    buf: [u8; 32],
    len: usize,
}

impl core::ops::Deref for IdBuf {
    type Target = str;
    fn deref(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("?")
    }
}

#[cfg(feature = "ml-dsa")]
mod imp {
    use ml_dsa::{EncodedSignature, EncodedVerifyingKey, ExpandedSigningKey, ExpandedSigningKeyBytes, MlDsaParams};

    pub struct RustCrypto<P>(core::marker::PhantomData<P>);

    impl<P: MlDsaParams> super::Scheme for RustCrypto<P> {
        fn keygen(seed: &[u8; 32], pk: &mut [u8]) -> usize {
            let key = ExpandedSigningKey::<P>::from_seed(&(*seed).into()).verifying_key().encode();
            pk[..key.len()].copy_from_slice(&key);
            key.len()
        }
        fn sign(sk: &[u8], msg: &[u8], sig: &mut [u8]) -> usize {
            let Ok(sk) = <&ExpandedSigningKeyBytes<P>>::try_from(sk) else { return 0 };
            // The expanded (FIPS 204 skEncode) form is what the ACVP vectors carry; the crate
            // deprecates it in favour of seeds, which the vectors do not have.
            #[allow(deprecated)]
            let sk = ExpandedSigningKey::<P>::from_expanded(sk);
            let s = sk.sign_internal(&[msg], &Default::default()).encode();
            sig[..s.len()].copy_from_slice(&s);
            s.len()
        }
        fn verify(pk: &[u8], msg: &[u8], sig: &[u8]) -> bool {
            let (Ok(pk), Ok(sig)) = (<&EncodedVerifyingKey<P>>::try_from(pk), <&EncodedSignature<P>>::try_from(sig))
            else {
                return false;
            };
            let Some(sig) = ml_dsa::Signature::<P>::decode(sig) else { return false };
            ml_dsa::VerifyingKey::<P>::decode(pk).verify_internal(msg, &sig)
        }
    }

    pub type MlDsa44 = RustCrypto<ml_dsa::MlDsa44>;
    pub type MlDsa65 = RustCrypto<ml_dsa::MlDsa65>;
    pub type MlDsa87 = RustCrypto<ml_dsa::MlDsa87>;
}

#[cfg(feature = "fips204")]
mod imp {
    use fips204::traits::{KeyGen as _, SerDes as _};

    /// `sign_internal` takes a generator for the hedged variant; the deterministic variant
    /// (`hedged: false`, rnd = 0^32) never calls it.
    struct NoRng;
    impl fips204::RngCore for NoRng {
        fn next_u32(&mut self) -> u32 {
            0
        }
        fn next_u64(&mut self) -> u64 {
            0
        }
        fn fill_bytes(&mut self, dest: &mut [u8]) {
            dest.fill(0);
        }
        fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), fips204::RngError> {
            dest.fill(0);
            Ok(())
        }
    }
    impl fips204::CryptoRng for NoRng {}

    macro_rules! fips204_set {
        ($ty:ident, $m:ident) => {
            pub struct $ty;
            impl super::Scheme for $ty {
                fn keygen(seed: &[u8; 32], pk: &mut [u8]) -> usize {
                    let key = fips204::$m::KG::keygen_from_seed(seed).0.into_bytes();
                    pk[..key.len()].copy_from_slice(&key);
                    key.len()
                }
                fn sign(sk: &[u8], msg: &[u8], sig: &mut [u8]) -> usize {
                    let Ok(sk) = sk.try_into() else { return 0 };
                    let Ok(sk) = fips204::$m::PrivateKey::try_from_bytes(sk) else { return 0 };
                    // The ACVP internal-interface hook (the crate's `acvp-internal` feature).
                    #[allow(deprecated)]
                    let Ok(s) = sk.sign_internal(&mut NoRng, msg, false) else { return 0 };
                    sig[..s.len()].copy_from_slice(&s);
                    s.len()
                }
                fn verify(pk: &[u8], msg: &[u8], sig: &[u8]) -> bool {
                    let (Ok(pk), Ok(sig)) = (pk.try_into(), sig.try_into()) else { return false };
                    let Ok(pk) = fips204::$m::PublicKey::try_from_bytes(pk) else { return false };
                    #[allow(deprecated)]
                    pk.verify_internal(msg, sig)
                }
            }
        };
    }
    #[cfg(feature = "ml-dsa-44")]
    fips204_set!(MlDsa44, ml_dsa_44);
    #[cfg(feature = "ml-dsa-65")]
    fips204_set!(MlDsa65, ml_dsa_65);
    #[cfg(feature = "ml-dsa-87")]
    fips204_set!(MlDsa87, ml_dsa_87);
}

pub fn run(s: &mut Session) {
    #[cfg(feature = "ml-dsa-44")]
    kats::<imp::MlDsa44>(s, "ml_dsa_44", "ML-DSA-44", &ML_DSA_44);
    #[cfg(feature = "ml-dsa-65")]
    kats::<imp::MlDsa65>(s, "ml_dsa_65", "ML-DSA-65", &ML_DSA_65);
    #[cfg(feature = "ml-dsa-87")]
    kats::<imp::MlDsa87>(s, "ml_dsa_87", "ML-DSA-87", &ML_DSA_87);
    let _ = s;
}
