//! SHA-256, SHA-384 and SHA3-256 whose compression function (SHA-2) or permutation
//! (Keccak-f[1600]) is wolfSSL's hand-written Thumb-2 assembly, for the table's `*_asm` rows.
//!
//! The assembly (wolfSSL 5.7.2, `wolfcrypt/src/port/arm/thumb2-sha{256,512,3}-asm.S`, from
//! Debian's `wolfssl` source package) is compiled unmodified by build.rs when `bash ci/setup.sh`
//! has unpacked it. Only the block functions are wolfSSL's; the message schedule around them
//! (padding, length, sponge absorb/squeeze) is this file's, per FIPS 180-4 and FIPS 202. Without
//! the source the functions below panic with what to install, so the rows fail, not vanish.

/// Initial hash values, FIPS 180-4 section 5.3.3 (SHA-256) and 5.3.4 (SHA-384).
const SHA256_IV: [u32; 8] =
    [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
const SHA384_IV: [u64; 8] = [
    0xcbbb9d5dc1059ed8,
    0x629a292a367cd507,
    0x9159015a3070dd17,
    0x152fecd8f70e5939,
    0x67332667ffc00b31,
    0x8eb44a8768581511,
    0xdb0c2e0d64f98fa7,
    0x47b5481dbefa4fa4,
];
/// SHA3-256's rate: 1088 bits (FIPS 202 section 6.1, capacity 512).
const SHA3_256_RATE: usize = 136;

#[cfg(wolfssl_asm)]
#[allow(non_snake_case)]
mod ffi {
    // wolfSSL's prototypes take its context structs, whose first member is the chaining state
    // (`word32 digest[8]` / `word64 digest[8]`); the assembly touches nothing else of them.
    unsafe extern "C" {
        /// SHA-256 blocks: `len` bytes of `data`, a non-zero multiple of 64 (unaligned allowed).
        pub fn Transform_Sha256_Len(state: *mut u32, data: *const u8, len: u32);
        /// SHA-512 blocks: `len` bytes of `data`, a non-zero multiple of 128 (unaligned allowed).
        pub fn Transform_Sha512_Len(state: *mut u64, data: *const u8, len: u32);
        /// Keccak-f[1600] on the 25 lanes (lane x + 5y, little-endian words).
        pub fn BlockSha3(state: *mut u64);
    }
}

#[cfg(not(wolfssl_asm))]
#[allow(non_snake_case)]
mod ffi {
    const MISSING: &str = "the *_asm rows need wolfSSL 5.7.2's Thumb-2 assembly, which was not found when this \
        firmware was built (Debian's wolfssl source package, unpacked under target/third-party/src): run \
        `bash ci/setup.sh` (or set MCUBENCH_THIRD_PARTY_SRC to where wolfssl-5.7.2 is) and rebuild";
    /// Panics, but not provably to the optimizer (`black_box`): a stub that always diverges would
    /// make the rows' code dead, and their `sb_boot_*_asm` functions would vanish from the ELF,
    /// which is what this must not do.
    #[inline(never)]
    fn missing() {
        if core::hint::black_box(true) {
            panic!("{MISSING}")
        }
    }
    pub unsafe fn Transform_Sha256_Len(_: *mut u32, _: *const u8, _: u32) {
        missing()
    }
    pub unsafe fn Transform_Sha512_Len(_: *mut u64, _: *const u8, _: u32) {
        missing()
    }
    pub unsafe fn BlockSha3(_: *mut u64) {
        missing()
    }
}

fn sha256_blocks(h: &mut [u32; 8], data: &[u8]) {
    debug_assert!(data.len() % 64 == 0);
    if !data.is_empty() {
        // SAFETY: `h` is the 8-word state; `data` holds `len` readable bytes, a multiple of 64.
        unsafe { ffi::Transform_Sha256_Len(h.as_mut_ptr(), data.as_ptr(), data.len() as u32) }
    }
}

fn sha512_blocks(h: &mut [u64; 8], data: &[u8]) {
    debug_assert!(data.len() % 128 == 0);
    if !data.is_empty() {
        // SAFETY: as above, 128-byte blocks.
        unsafe { ffi::Transform_Sha512_Len(h.as_mut_ptr(), data.as_ptr(), data.len() as u32) }
    }
}

/// SHA-256 of `m` (FIPS 180-4): whole blocks straight from `m`, then the padded tail (0x80,
/// zeros, the bit length big-endian in the last 8 bytes; one block or two).
pub fn sha256(m: &[u8]) -> [u8; 32] {
    let mut h = SHA256_IV;
    let whole = m.len() - m.len() % 64;
    sha256_blocks(&mut h, &m[..whole]);
    let tail = &m[whole..];
    let mut last = [0u8; 128];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] = 0x80;
    let n = if tail.len() < 56 { 64 } else { 128 };
    last[n - 8..n].copy_from_slice(&(m.len() as u64 * 8).to_be_bytes());
    sha256_blocks(&mut h, &last[..n]);
    let mut out = [0u8; 32];
    for (o, w) in out.chunks_exact_mut(4).zip(h) {
        o.copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// SHA-384 of `m` (FIPS 180-4): SHA-512's blocks from SHA-384's initial value, a 128-bit
/// length, the first six words of the state.
pub fn sha384(m: &[u8]) -> [u8; 48] {
    let mut h = SHA384_IV;
    let whole = m.len() - m.len() % 128;
    sha512_blocks(&mut h, &m[..whole]);
    let tail = &m[whole..];
    let mut last = [0u8; 256];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] = 0x80;
    let n = if tail.len() < 112 { 128 } else { 256 };
    // The length field is 128 bits; a slice's bit length fits its low 64 (the high ones stay 0).
    last[n - 8..n].copy_from_slice(&(m.len() as u64 * 8).to_be_bytes());
    sha512_blocks(&mut h, &last[..n]);
    let mut out = [0u8; 48];
    for (o, w) in out.chunks_exact_mut(8).zip(h) {
        o.copy_from_slice(&w.to_be_bytes());
    }
    out
}

/// XORs one rate-sized block into the state's first lanes (little-endian) and permutes.
fn absorb(s: &mut [u64; 25], block: &[u8]) {
    for (lane, b) in s.iter_mut().zip(block.chunks_exact(8)) {
        *lane ^= u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    }
    // SAFETY: `s` is the 25-lane state.
    unsafe { ffi::BlockSha3(s.as_mut_ptr()) }
}

/// SHA3-256 of `m` (FIPS 202): the sponge over Keccak-f[1600] with rate 136 bytes, domain
/// suffix 01 and pad10*1 (the last block's first padding byte 0x06, its last byte | 0x80).
pub fn sha3_256(m: &[u8]) -> [u8; 32] {
    let mut s = [0u64; 25];
    let mut blocks = m.chunks_exact(SHA3_256_RATE);
    for block in &mut blocks {
        absorb(&mut s, block);
    }
    let tail = blocks.remainder();
    let mut last = [0u8; SHA3_256_RATE];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] ^= 0x06;
    last[SHA3_256_RATE - 1] ^= 0x80;
    absorb(&mut s, &last);
    let mut out = [0u8; 32];
    for (o, lane) in out.chunks_exact_mut(8).zip(s) {
        o.copy_from_slice(&lane.to_le_bytes());
    }
    out
}
