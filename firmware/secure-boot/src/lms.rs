//! RFC 8554 HSS/LMS signature verification on the `sha2` crate, written here: RustCrypto's
//! `lms-signature` (0.1.0-rc.2) needs `std` and `getrandom`'s OS backend, so it does not build for
//! a thumb target; `build.rs` signs with it on the host, so the row is a differential between
//! two implementations, and the firmware also verifies RFC 8554 Appendix F test cases 1 and 2.
//!
//! SHA-256 with n = m = 32: LMS types 5..9 (LMS_SHA256_M32_H5..H25) and LM-OTS types 1..4
//! (LMOTS_SHA256_N32_W1..W8), any number of HSS levels up to 8. Every length is checked before
//! it is used: a malformed signature or key is rejected, never read out of bounds, and no
//! branch of the verify path panics.

use sha2::{Digest as _, Sha256};

const N: usize = 32;
/// LMS public key: type, LM-OTS type, I (16 bytes), T[1].
pub const LMS_PK_LEN: usize = 8 + 16 + N;
// Domain separators (RFC 8554 section 3.2 / Appendix B).
const D_PBLC: [u8; 2] = [0x80, 0x80];
const D_MESG: [u8; 2] = [0x81, 0x81];
const D_LEAF: [u8; 2] = [0x82, 0x82];
const D_INTR: [u8; 2] = [0x83, 0x83];

/// LM-OTS parameters (RFC 8554 Table 1): lg(w) (a digit is w = 2^lg bits), chains p, checksum
/// shift ls.
fn ots_params(ots_type: u32) -> Option<(u32, usize, u32)> {
    match ots_type {
        1 => Some((0, 265, 7)),
        2 => Some((1, 133, 6)),
        3 => Some((2, 67, 4)),
        4 => Some((3, 34, 0)),
        _ => None,
    }
}

/// LMS tree height (RFC 8554 Table 2).
fn lms_height(lms_type: u32) -> Option<u32> {
    match lms_type {
        5 => Some(5),
        6 => Some(10),
        7 => Some(15),
        8 => Some(20),
        9 => Some(25),
        _ => None,
    }
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let s: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_be_bytes(s))
}

/// coef(S, i, w) (RFC 8554 section 3.1.3): the i-th w-bit digit of S, most significant first.
/// Shifts instead of divisions, `get` instead of indexing: the verify path has no panic branch,
/// so its static stack bound is sound.
fn coef(s: &[u8], i: usize, lg: u32) -> u32 {
    let bits = 1u32 << lg;
    let digit_in_byte = (i & ((8 >> lg) - 1)) as u32;
    let shift = 8 - (bits * digit_in_byte + bits);
    s.get((i << lg) >> 3).map_or(0, |&b| (u32::from(b) >> shift) & ((1 << bits) - 1))
}

/// Length of the LMS signature at the start of `sig` (its LM-OTS and LMS types say), if valid.
fn lms_sig_len(sig: &[u8]) -> Option<usize> {
    let (_, p, _) = ots_params(u32_at(sig, 4)?)?;
    let ots_len = 4 + N + p * N;
    let h = lms_height(u32_at(sig, 4 + ots_len)?)?;
    Some(4 + ots_len + 4 + h as usize * N)
}

/// The candidate LM-OTS public key Kc from a signature (RFC 8554 Algorithm 4b).
fn ots_candidate(id: &[u8], q: u32, ots_type: u32, ots_sig: &[u8], msg: &[u8]) -> Option<[u8; N]> {
    let (lg, p, ls) = ots_params(ots_type)?;
    if u32_at(ots_sig, 0)? != ots_type {
        return None;
    }
    let (c, y) = ots_sig.get(4..)?.split_at_checked(N)?;
    let (y, rest) = y.as_chunks::<N>();
    if y.len() != p || !rest.is_empty() {
        return None;
    }
    let q_bytes = q.to_be_bytes();
    let digest: [u8; N] = Sha256::new()
        .chain_update(id)
        .chain_update(q_bytes)
        .chain_update(D_MESG)
        .chain_update(c)
        .chain_update(msg)
        .finalize()
        .into();
    let max = (1u32 << (1 << lg)) - 1;
    let cksm: u32 = (0..(N * 8) >> lg).map(|i| max - coef(&digest, i, lg)).sum::<u32>() << ls;
    let mut qc = [0u8; N + 2];
    qc[..N].copy_from_slice(&digest);
    qc[N..].copy_from_slice(&(cksm as u16).to_be_bytes());
    let mut kc = Sha256::new().chain_update(id).chain_update(q_bytes).chain_update(D_PBLC);
    for (i, yi) in y.iter().enumerate() {
        let mut tmp = *yi;
        for j in coef(&qc, i, lg)..max {
            let step = Sha256::new()
                .chain_update(id)
                .chain_update(q_bytes)
                .chain_update((i as u16).to_be_bytes())
                .chain_update([j as u8])
                .chain_update(tmp);
            tmp = step.finalize().into();
        }
        kc.update(tmp);
    }
    Some(kc.finalize().into())
}

/// LMS signature verification (RFC 8554 Algorithm 6a): `pk` is an LMS public key, `sig` exactly
/// one LMS signature.
pub fn lms_verify(pk: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    pk.len() == LMS_PK_LEN && lms_root(pk, msg, sig).is_some_and(|root| pk.get(24..) == Some(&root[..]))
}

/// The root the signature leads to, or None when the signature does not parse or does not match
/// the key's types.
fn lms_root(pk: &[u8], msg: &[u8], sig: &[u8]) -> Option<[u8; N]> {
    let (lms_type, ots_type) = (u32_at(pk, 0)?, u32_at(pk, 4)?);
    let id = pk.get(8..24)?;
    let h = lms_height(lms_type)?;
    if lms_sig_len(sig)? != sig.len() {
        return None;
    }
    let q = u32_at(sig, 0)?;
    let (_, p, _) = ots_params(u32_at(sig, 4)?)?;
    let ots_end = 4 + 4 + N + p * N;
    if q >= 1 << h || u32_at(sig, ots_end)? != lms_type {
        return None;
    }
    let kc = ots_candidate(id, q, ots_type, sig.get(4..ots_end)?, msg)?;
    let mut node = (1u32 << h) + q;
    let mut tmp: [u8; N] = Sha256::new()
        .chain_update(id)
        .chain_update(node.to_be_bytes())
        .chain_update(D_LEAF)
        .chain_update(kc)
        .finalize()
        .into();
    for sibling in sig.get(ots_end + 4..)?.as_chunks::<N>().0 {
        let parent = Sha256::new().chain_update(id).chain_update((node / 2).to_be_bytes()).chain_update(D_INTR);
        let parent = if node % 2 == 1 {
            parent.chain_update(sibling).chain_update(tmp)
        } else {
            parent.chain_update(tmp).chain_update(sibling)
        };
        tmp = parent.finalize().into();
        node /= 2;
    }
    Some(tmp)
}

/// HSS signature verification (RFC 8554 section 6.3): `pk` is u32 L || LMS public key, `sig` is
/// u32 Nspk || (LMS signature || LMS public key) * Nspk || LMS signature, with Nspk = L - 1.
pub fn hss_verify(pk: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    let (Some(levels), Some(nspk), Some(mut key), Some(mut rest)) =
        (u32_at(pk, 0), u32_at(sig, 0), pk.get(4..), sig.get(4..))
    else {
        return false;
    };
    if key.len() != LMS_PK_LEN || !(1..=8).contains(&levels) || nspk != levels - 1 {
        return false;
    }
    for _ in 0..nspk {
        let Some(len) = lms_sig_len(rest) else { return false };
        let Some((child_sig, after)) = rest.split_at_checked(len) else { return false };
        let Some((child_pk, after)) = after.split_at_checked(LMS_PK_LEN) else { return false };
        if !lms_verify(key, child_pk, child_sig) {
            return false;
        }
        key = child_pk;
        rest = after;
    }
    lms_verify(key, msg, rest)
}
