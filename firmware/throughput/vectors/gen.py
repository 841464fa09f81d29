#!/usr/bin/env python3
"""Writes ../src/vectors.rs: the expected outputs of the throughput firmware's measured operations.

Run from anywhere: `python3 firmware/throughput/vectors/gen.py` (needs Python's `cryptography`
package). The sized messages' expected outputs come from Python's hashlib and pyca/cryptography
(OpenSSL), an implementation independent of the RustCrypto crates the firmware measures. The
official vectors are checked here against the same implementations before they are written, so a
typo in a copied vector fails here, not only on the board.
"""
import hashlib
import pathlib

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, x25519
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

SIZES = [16, 64, 256, 1024, 4096, 16384]
# The message the firmware fills its buffer with: byte i is i mod 251 (no period of 2^k).
MSG = bytes(i % 251 for i in range(max(SIZES)))
H = bytes.fromhex

# FIPS 180-2 appendix B.1 / C.1 ("abc"), FIPS 202 examples (SHA3-256 "abc"; SHAKE of the empty message).
SHA256_ABC = H("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
SHA512_ABC = H("ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
               "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
SHA3_256_ABC = H("3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532")
SHAKE128_EMPTY = H("7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26")
SHAKE256_EMPTY = H("46b9dd2b0ba88d13233b3feb743eeb243fcd52ea62b81b82b50c27646ed5762f")
# NIST SP 800-38A, F.2.1 (CBC-AES128.Encrypt) and F.5.1 (CTR-AES128.Encrypt).
AES_KEY = H("2b7e151628aed2a6abf7158809cf4f3c")
CBC_IV = H("000102030405060708090a0b0c0d0e0f")
CTR_IV = H("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
SP800_38A_PT = H("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
                 "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710")
CBC_CT = H("7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"
           "73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7")
CTR_CT = H("874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"
           "5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee")
# McGrew & Viega, "The Galois/Counter Mode of Operation (GCM)", test case 2 (AES-128).
GCM_TC2_CT, GCM_TC2_TAG = H("0388dace60b6a392f328c2b971b2fe78"), H("ab6e47d42cec13bdf53a67b21257bddf")
GCM_NONCE = H("cafebabefacedbaddecaf888")  # the nonce of that paper's test cases 3 and 4
# RFC 8439, 2.8.2 (AEAD_CHACHA20_POLY1305 example).
CHACHA_KEY = H("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
CHACHA_NONCE = H("070000004041424344454647")
CHACHA_AAD = H("50515253c0c1c2c3c4c5c6c7")
CHACHA_PT = (b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for "
             b"the future, sunscreen would be it.")
CHACHA_TAG = H("1ae10b594f09e26a7e902ecbd0600691")
# RFC 8032, 7.1, TEST 1 (empty message).
ED_SK = H("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
ED_PK = H("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
ED_SIG = H("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
           "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
# RFC 7748, 6.1.
X_A_SK = H("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
X_A_PK = H("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
X_B_PK = H("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
X_SHARED = H("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
# RFC 6979, A.2.5 (P-256, SHA-256, message "sample").
P256_X = H("c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721")
P256_U = H("04" "60fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6"
           "7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299")
P256_SIG = H("efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716"
             "f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8")


def check_official():
    assert hashlib.sha256(b"abc").digest() == SHA256_ABC and hashlib.sha512(b"abc").digest() == SHA512_ABC
    assert hashlib.sha3_256(b"abc").digest() == SHA3_256_ABC
    assert hashlib.shake_128(b"").digest(32) == SHAKE128_EMPTY and hashlib.shake_256(b"").digest(32) == SHAKE256_EMPTY
    enc = Cipher(algorithms.AES(AES_KEY), modes.CBC(CBC_IV)).encryptor()
    assert enc.update(SP800_38A_PT) + enc.finalize() == CBC_CT, "SP 800-38A F.2.1"
    enc = Cipher(algorithms.AES(AES_KEY), modes.CTR(CTR_IV)).encryptor()
    assert enc.update(SP800_38A_PT) + enc.finalize() == CTR_CT, "SP 800-38A F.5.1"
    assert AESGCM(bytes(16)).encrypt(bytes(12), bytes(16), None) == GCM_TC2_CT + GCM_TC2_TAG, "GCM TC2"
    out = ChaCha20Poly1305(CHACHA_KEY).encrypt(CHACHA_NONCE, CHACHA_PT, CHACHA_AAD)
    assert out[-16:] == CHACHA_TAG, "RFC 8439 2.8.2"
    sk = ed25519.Ed25519PrivateKey.from_private_bytes(ED_SK)
    raw = serialization.Encoding.Raw, serialization.PublicFormat.Raw
    assert sk.public_key().public_bytes(*raw) == ED_PK and sk.sign(b"") == ED_SIG, "RFC 8032 TEST 1"
    a = x25519.X25519PrivateKey.from_private_bytes(X_A_SK)
    assert a.public_key().public_bytes(*raw) == X_A_PK, "RFC 7748 6.1"
    assert a.exchange(x25519.X25519PublicKey.from_public_bytes(X_B_PK)) == X_SHARED, "RFC 7748 6.1"
    d = ec.derive_private_key(int.from_bytes(P256_X, "big"), ec.SECP256R1())
    pub = d.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    assert pub == P256_U, "RFC 6979 A.2.5 public key"
    r, s = int.from_bytes(P256_SIG[:32], "big"), int.from_bytes(P256_SIG[32:], "big")
    d.public_key().verify(
        encode_dss_signature(r, s),
        b"sample", ec.ECDSA(hashes.SHA256()))


def sized():
    """(row, label, expected output) per algorithm and size."""
    rows = []
    for n in SIZES:
        m = MSG[:n]
        rows.append(("sha256", n, hashlib.sha256(m).digest()))
        rows.append(("sha512", n, hashlib.sha512(m).digest()))
        rows.append(("sha3_256", n, hashlib.sha3_256(m).digest()))
        rows.append(("shake128", n, hashlib.shake_128(m).digest(32)))
        rows.append(("shake256", n, hashlib.shake_256(m).digest(32)))
        enc = Cipher(algorithms.AES(AES_KEY), modes.CBC(CBC_IV)).encryptor()
        rows.append(("aes128_cbc", n, (enc.update(m) + enc.finalize())[-16:]))
        enc = Cipher(algorithms.AES(AES_KEY), modes.CTR(CTR_IV)).encryptor()
        rows.append(("aes128_ctr", n, (enc.update(m) + enc.finalize())[-16:]))
        rows.append(("aes128_gcm", n, AESGCM(AES_KEY).encrypt(GCM_NONCE, m, None)[-16:]))
        rows.append(("chacha20poly1305", n, ChaCha20Poly1305(CHACHA_KEY).encrypt(CHACHA_NONCE, m, None)[-16:]))
    return rows


# RFC 5903, 8.1 (256-bit random ECP group): the initiator's secret i, the responder's public
# key g^r and the shared x coordinate g^ir.
ECDH_I = H("c88f01f510d9ac3f70a292daa2316de544e9aab8afe84049c62a9c57862d1433")
ECDH_GR = H("04" "d12dfb5289c8d4f81208b70270398c342296970a0bccb74c736fc7554494bf63"
            "56fbf3ca366cc23e8157854c13c58d6aac23f046ada30f8353e74f33039872ab")
ECDH_GIR = H("d6840f6b42f6edafd13116e0e12565202fef8e9ece7dce03812464d04b9442de")


def check_ecdh():
    d = ec.derive_private_key(int.from_bytes(ECDH_I, "big"), ec.SECP256R1())
    peer = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), ECDH_GR)
    assert d.exchange(ec.ECDH(), peer) == ECDH_GIR, "RFC 5903 8.1"


def rs(name, v):
    body = ", ".join(f"0x{b:02x}" for b in v)
    return f"pub const {name}: [u8; {len(v)}] = [{body}];\n"


def main():
    check_official()
    check_ecdh()
    out = ["// @generated by vectors/gen.py (Python hashlib and pyca/cryptography); do not edit.\n",
           "// Official vectors (sources in gen.py and main.rs) were checked against OpenSSL there.\n\n"]
    out.append(f"pub const SIZES: [usize; {len(SIZES)}] = {SIZES};\n")
    out.append("/// Expected output per (row, message bytes): digest, or the last 16 bytes of ciphertext (CBC,\n"
               "/// CTR), or the tag (GCM, ChaCha20-Poly1305).\n")
    rows = sized()
    out.append(f"pub const SIZED: [(&str, usize, &[u8]); {len(rows)}] = [\n")
    for row, n, v in rows:
        out.append(f"    (\"{row}\", {n}, &[{', '.join(f'0x{b:02x}' for b in v)}]),\n")
    out.append("];\n")
    for name in ["SHA256_ABC", "SHA512_ABC", "SHA3_256_ABC", "SHAKE128_EMPTY", "SHAKE256_EMPTY", "AES_KEY", "CBC_IV", "CTR_IV", "SP800_38A_PT", "CBC_CT", "CTR_CT", "GCM_TC2_CT", "GCM_TC2_TAG",
                 "GCM_NONCE", "CHACHA_KEY", "CHACHA_NONCE", "CHACHA_AAD", "CHACHA_PT", "CHACHA_TAG", "ED_SK", "ED_PK",
                 "ED_SIG", "X_A_SK", "X_A_PK", "X_B_PK", "X_SHARED", "P256_X", "P256_U", "P256_SIG"]:
        out.append(rs(name, globals()[name]))
    for name in ["ECDH_I", "ECDH_GR", "ECDH_GIR"]:
        out.append(rs(name, globals()[name]))
    path = pathlib.Path(__file__).resolve().parent.parent / "src" / "vectors.rs"
    path.write_text("".join(out))


if __name__ == "__main__":
    main()
