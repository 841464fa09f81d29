//! RFC 8391 XMSS signature verification, parameter set XMSS-SHA2_10_256 (OID 0x00000001: SHA-256,
//! n = 32, Winternitz w = 16, len = 67 chains, tree height 10), on the `sha2` crate. Written
//! here: there is no maintained `no_std` XMSS crate (RustCrypto's `xmss` 0.1.0-pre.0 is a
//! pre-release on `Vec` and `digest` 0.10). `build.rs` includes this file for the hash functions
//! its signer shares with the verifier (F, H, PRF, chains, L-tree), and the firmware also verifies
//! a known-answer test from the XMSS reference implementation (see the guide page).
//!
//! Plain implementation: every PRF/F/H call hashes its 32-byte domain prefix and key again (no
//! precomputed SHA-256 midstates), as RFC 8391 section 5.1 writes them.

use sha2::{Digest as _, Sha256};

pub const N: usize = 32;
/// Chains: len1 = 64 message digits of 4 bits, len2 = 3 checksum digits.
pub const LEN: usize = 67;
const LEN1: usize = 64;
/// Tree height.
pub const H: usize = 10;
pub const OID: u32 = 1;
/// Signature: idx (4 bytes) || r || WOTS+ signature || authentication path.
pub const SIG_LEN: usize = 4 + N + LEN * N + H * N;
/// Public key (RFC 8391 section 4.1.7): OID || root || SEED.
pub const PK_LEN: usize = 4 + 2 * N;

/// Address types (RFC 8391 section 2.5).
pub const OTS: u32 = 0;
pub const LTREE: u32 = 1;
pub const HASH_TREE: u32 = 2;

/// A hash function address: eight 32-bit words, serialised big endian. Word 3 is the type; words 4
/// to 6 mean OTS/chain/hash address (type 0), L-tree/height/index (1), padding/height/index (2);
/// word 7 is keyAndMask.
#[derive(Clone, Copy, Default)]
pub struct Adrs(pub [u32; 8]);

impl Adrs {
    /// A fresh address of `kind` with word 4 set (OTS or L-tree address; 0 for the hash tree).
    pub fn new(kind: u32, word4: u32) -> Self {
        Adrs([0, 0, 0, kind, word4, 0, 0, 0])
    }
    pub fn bytes(&self) -> [u8; 32] {
        core::array::from_fn(|i| self.0[i / 4].to_be_bytes()[i % 4])
    }
}

/// SHA2-256(toByte(pad, 32) || key || m...): F (pad 0), H (1), H_msg (2), PRF (3), and the
/// reference implementation's PRF_keygen (4) on the signer's side.
pub fn hash(pad: u8, key: &[u8], m: &[&[u8]]) -> [u8; N] {
    let mut prefix = [0u8; 32];
    prefix[31] = pad;
    let mut h = Sha256::new().chain_update(prefix).chain_update(key);
    for part in m {
        h.update(part);
    }
    h.finalize().into()
}

fn prf(seed: &[u8], adrs: &Adrs) -> [u8; N] {
    hash(3, seed, &[&adrs.bytes()])
}

fn xor(a: &[u8; N], b: &[u8; N]) -> [u8; N] {
    core::array::from_fn(|i| a[i] ^ b[i])
}

/// chain(X, i, s, SEED, ADRS) (RFC 8391 Algorithm 2), iteratively.
pub fn chain(x: &[u8; N], start: u32, steps: u32, seed: &[u8], adrs: &mut Adrs) -> [u8; N] {
    let mut tmp = *x;
    for j in start..start + steps {
        adrs.0[6] = j;
        adrs.0[7] = 0;
        let key = prf(seed, adrs);
        adrs.0[7] = 1;
        let mask = prf(seed, adrs);
        tmp = hash(0, &key, &[&xor(&tmp, &mask)]);
    }
    tmp
}

/// The message's base-16 digits followed by the checksum's (RFC 8391 Algorithm 5 and 6, w = 16).
pub fn digits(m: &[u8; N]) -> [u32; LEN] {
    let mut d = [0u32; LEN];
    for i in 0..LEN1 {
        d[i] = u32::from(m[i / 2] >> (4 * (1 - i % 2)) & 15);
    }
    // csum <<= 8 - ((len2 * lg(w)) % 8) = 4, as 2 bytes; its first three 4-bit digits.
    let csum = d[..LEN1].iter().map(|x| 15 - x).sum::<u32>() << 4;
    d[LEN1] = (csum >> 12) & 15;
    d[LEN1 + 1] = (csum >> 8) & 15;
    d[LEN1 + 2] = (csum >> 4) & 15;
    d
}

/// RAND_HASH(LEFT, RIGHT, SEED, ADRS) (RFC 8391 Algorithm 7).
pub fn rand_hash(left: &[u8; N], right: &[u8; N], seed: &[u8], adrs: &mut Adrs) -> [u8; N] {
    adrs.0[7] = 0;
    let key = prf(seed, adrs);
    adrs.0[7] = 1;
    let m0 = prf(seed, adrs);
    adrs.0[7] = 2;
    let m1 = prf(seed, adrs);
    hash(1, &key, &[&xor(left, &m0), &xor(right, &m1)])
}

/// ltree(pk, SEED, ADRS) (RFC 8391 Algorithm 8): compresses the 67 WOTS+ public key nodes, in place.
pub fn ltree(pk: &mut [[u8; N]; LEN], seed: &[u8], adrs: &mut Adrs) -> [u8; N] {
    let mut len = LEN;
    adrs.0[5] = 0;
    while len > 1 {
        // `get`, not indexing: no panic branch on the verify path (its static stack bound is sound).
        for i in 0..len / 2 {
            adrs.0[6] = i as u32;
            let (Some(&left), Some(&right)) = (pk.get(2 * i), pk.get(2 * i + 1)) else { break };
            if let Some(parent) = pk.get_mut(i) {
                *parent = rand_hash(&left, &right, seed, adrs);
            }
        }
        if len % 2 == 1
            && let Some(&last) = pk.get(len - 1)
            && let Some(slot) = pk.get_mut(len / 2)
        {
            *slot = last;
        }
        len = len.div_ceil(2);
        adrs.0[5] += 1;
    }
    pk[0]
}

/// The root a signature's leaf and authentication path lead to (RFC 8391 Algorithm 13, with
/// WOTS_pkFromSig, Algorithm 6).
pub fn root_from_sig(idx: u32, wots_sig: &[[u8; N]; LEN], auth: &[[u8; N]; H], m: &[u8; N], seed: &[u8]) -> [u8; N] {
    let mut pk = [[0u8; N]; LEN];
    let mut ots = Adrs::new(OTS, idx);
    for (i, ((node, d), s)) in pk.iter_mut().zip(digits(m)).zip(wots_sig).enumerate() {
        ots.0[5] = i as u32;
        *node = chain(s, d, 15 - d, seed, &mut ots);
    }
    let mut node = ltree(&mut pk, seed, &mut Adrs::new(LTREE, idx));
    let mut adrs = Adrs::new(HASH_TREE, 0);
    for (k, sibling) in auth.iter().enumerate() {
        adrs.0[5] = k as u32;
        adrs.0[6] = idx >> (k + 1);
        node = if (idx >> k) & 1 == 0 {
            rand_hash(&node, sibling, seed, &mut adrs)
        } else {
            rand_hash(sibling, &node, seed, &mut adrs)
        };
    }
    node
}

/// XMSS_verify (RFC 8391 Algorithm 14) for XMSS-SHA2_10_256: `pk` is OID || root || SEED.
pub fn verify(pk: &[u8], msg: &[u8], sig: &[u8]) -> bool {
    // Fixed-size views: every field below is a constant range of an array.
    let (Ok(pk), Ok(sig)) = (<&[u8; PK_LEN]>::try_from(pk), <&[u8; SIG_LEN]>::try_from(sig)) else { return false };
    let (oid, [root, seed]) = (&pk[..4], pk[4..].as_chunks::<N>().0) else { return false };
    let idx = u32::from_be_bytes([sig[0], sig[1], sig[2], sig[3]]);
    if *oid != OID.to_be_bytes() || idx >= 1 << H {
        return false;
    }
    let r = &sig[4..4 + N];
    let mut idx_bytes = [0u8; N];
    idx_bytes[N - 4..].copy_from_slice(&idx.to_be_bytes());
    // H_msg(r || root || toByte(idx, 32), M)
    let m = hash(2, r, &[root, &idx_bytes, msg]);
    let (Ok(wots_sig), Ok(auth)) = (
        <&[[u8; N]; LEN]>::try_from(sig[4 + N..4 + N + LEN * N].as_chunks::<N>().0),
        <&[[u8; N]; H]>::try_from(sig[4 + N + LEN * N..].as_chunks::<N>().0),
    ) else {
        return false;
    };
    root_from_sig(idx, wots_sig, auth, &m, seed) == *root
}
