/* A vendor-style secure-boot check on Mbed TLS 2.28, as a bootloader team would write it: the
 * firmware knows nothing of mcubench (no mcubench.h, no result protocol). It prints on UART0 and
 * exits through semihosting (firmware/c/newlib/uart.c); mcubench judges the console lines and
 * the exit code (scenarios/bootloader.yaml) and measures the functions below as regions.
 *
 * The image is 100 KiB in RAM, made at start-up by a deterministic generator (image_fill:
 * xorshift32, see image_keys.h); the digest, public key and signature it is checked against are
 * committed test data made by gen_image_keys.py from the same generator.
 *
 * Two rows, named as mcubench's secure-boot table reads them from the ELF's symbols
 * (docs/src/guide/secure-boot.md):
 *   sha256      hash-only: SHA-256 of the image equals the digest in the header sb_hdr_sha256
 *   ecdsa_p256  SHA-256 of the image, then ECDSA P-256 over that digest with the public key
 *               sb_key_ecdsa_p256 and the signature sb_sig_ecdsa_p256 (r || s); the header
 *               sb_hdr_ecdsa_p256 holds the key hint (SHA-256 of the public key)
 * Per row: sb_boot_<row> (the whole boot check: header fields, hash, verify) calls
 * sb_hash_<row> (the image's SHA-256) and sb_verify_<row> (the digest compare, or the signature
 * check over the digest), so hash and verify are measured apart.
 *
 * Heap: Mbed TLS 2.28 keeps every bignum limb array on the heap (mbedtls_calloc, here newlib's
 * calloc: no MBEDTLS_PLATFORM_C), so the ECDSA verify path allocates and frees; there is no way
 * around it in 2.28. newlib's malloc takes its arena from _sbrk below, from the end of .bss up to
 * __StackLimit (the Makefile puts it STACK_SIZE below the top of RAM), so heap and stack have
 * regions of their own. The sha256 row does not allocate.
 *
 * main: boot the genuine image (must pass), flip one byte (must be rejected), restore it, for
 * each row; "all rows passed" and exit 0, or a "<row>: FAIL ..." line and exit 1. */
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mbedtls/bignum.h"
#include "mbedtls/ecdsa.h"
#include "mbedtls/ecp.h"
#include "mbedtls/sha256.h"
#include "mbedtls/version.h"

#include "image_keys.h"

/* A measured function: kept in the ELF under its own name (used), never inlined, and never
 * folded into an identical function (sb_hash_sha256 and sb_hash_ecdsa_p256 have the same body,
 * which GCC's identical code folding would otherwise merge). */
#define SB_REGION __attribute__((used, noinline, no_icf))

/* ---- The image header ---------------------------------------------------------------------- */

#define SB_MAGIC 0x544f4f42u /* "BOOT", little-endian */
#define SB_VERSION 1u
#define SB_DIGEST_LEN 32u

enum sb_alg { SB_ALG_SHA256 = 1, SB_ALG_ECDSA_P256 = 2 };

/* What sb_boot_<row> returns: 0 boots, anything else does not. */
enum sb_status {
    SB_OK = 0,
    SB_ERR_HEADER = 1,    /* magic, version, algorithm or image length wrong */
    SB_ERR_KEY_HINT = 2,  /* the header names another key than the one the bootloader holds */
    SB_ERR_DIGEST = 3,    /* hash-only: the image's digest is not the header's */
    SB_ERR_SIGNATURE = 4, /* the signature does not verify */
    SB_ERR_CRYPTO = 5,    /* Mbed TLS failed otherwise (bad key or signature encoding, no memory) */
};

/* 16 bytes of fixed fields, then 32 bytes: the digest (hash-only rows) or the key hint,
 * SHA-256 of the public key (signature rows; the signature follows the header). */
struct sb_hdr {
    uint32_t magic;
    uint32_t version;
    uint32_t image_len;
    uint32_t alg;
    uint8_t check[SB_DIGEST_LEN];
};

/* ---- Row `sha256`: hash only ---------------------------------------------------------------- */

__attribute__((used)) const struct sb_hdr sb_hdr_sha256 = {
    .magic = SB_MAGIC,
    .version = SB_VERSION,
    .image_len = SB_IMAGE_LEN,
    .alg = SB_ALG_SHA256,
    .check = SB_IMAGE_SHA256,
};

/* ---- Row `ecdsa_p256`: SHA-256, ECDSA P-256 ------------------------------------------------- */

__attribute__((used)) const struct sb_hdr sb_hdr_ecdsa_p256 = {
    .magic = SB_MAGIC,
    .version = SB_VERSION,
    .image_len = SB_IMAGE_LEN,
    .alg = SB_ALG_ECDSA_P256,
    .check = SB_KEY_HINT_ECDSA_P256,
};
__attribute__((used)) const uint8_t sb_key_ecdsa_p256[65] = SB_KEY_ECDSA_P256;
__attribute__((used)) const uint8_t sb_sig_ecdsa_p256[64] = SB_SIG_ECDSA_P256;

/* ---- Platform ------------------------------------------------------------------------------ */

/* Mbed TLS's secret wiping (MBEDTLS_PLATFORM_ZEROIZE_ALT): memset, then a barrier that tells the
 * compiler the zeroed memory may be read, so the stores are not removed as dead. */
void mbedtls_platform_zeroize(void *buf, size_t len)
{
    if (len > 0) memset(buf, 0, len);
    __asm__ volatile("" : : "r"(buf) : "memory");
}

/* newlib's heap: from `end` (the end of .bss, firmware/c/link.ld) up to __StackLimit, the
 * bottom of the stack region (defined by the Makefile). Replaces libnosys's _sbrk, which grows
 * until it meets the stack without noticing. */
extern char end[], __StackLimit[];

void *_sbrk(ptrdiff_t incr)
{
    static char *brk = end;
    if (incr > __StackLimit - brk || incr < end - brk) {
        errno = ENOMEM;
        return (void *)-1;
    }
    char *prev = brk;
    brk += incr;
    return prev;
}

/* ---- Helpers -------------------------------------------------------------------------------- */

/* Equal in time independent of where the bytes differ. */
static int ct_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint8_t diff = 0;
    for (size_t i = 0; i < n; i++) diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}

static int header_ok(const struct sb_hdr *hdr, enum sb_alg alg, size_t len)
{
    return hdr->magic == SB_MAGIC && hdr->version == SB_VERSION && hdr->alg == (uint32_t)alg &&
           hdr->image_len == len;
}

/* ---- sha256 --------------------------------------------------------------------------------- */

SB_REGION int sb_hash_sha256(const uint8_t *image, size_t len, uint8_t digest[SB_DIGEST_LEN])
{
    return mbedtls_sha256_ret(image, len, digest, 0 /* SHA-256, not SHA-224 */);
}

SB_REGION int sb_verify_sha256(const uint8_t digest[SB_DIGEST_LEN])
{
    return ct_equal(digest, sb_hdr_sha256.check, SB_DIGEST_LEN) ? SB_OK : SB_ERR_DIGEST;
}

SB_REGION int sb_boot_sha256(const uint8_t *image, size_t len)
{
    uint8_t digest[SB_DIGEST_LEN];
    if (!header_ok(&sb_hdr_sha256, SB_ALG_SHA256, len)) return SB_ERR_HEADER;
    if (sb_hash_sha256(image, len, digest) != 0) return SB_ERR_CRYPTO;
    return sb_verify_sha256(digest);
}

/* ---- ecdsa_p256 ----------------------------------------------------------------------------- */

SB_REGION int sb_hash_ecdsa_p256(const uint8_t *image, size_t len, uint8_t digest[SB_DIGEST_LEN])
{
    return mbedtls_sha256_ret(image, len, digest, 0);
}

/* ECDSA P-256 verification of (r, s) = sb_sig_ecdsa_p256 over `digest` with the public key
 * sb_key_ecdsa_p256 (checked to be a point of the curve first). */
SB_REGION int sb_verify_ecdsa_p256(const uint8_t digest[SB_DIGEST_LEN])
{
    mbedtls_ecp_group grp;
    mbedtls_ecp_point q;
    mbedtls_mpi r, s;
    mbedtls_ecp_group_init(&grp);
    mbedtls_ecp_point_init(&q);
    mbedtls_mpi_init(&r);
    mbedtls_mpi_init(&s);

    int ret = mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_SECP256R1);
    if (ret == 0) ret = mbedtls_ecp_point_read_binary(&grp, &q, sb_key_ecdsa_p256, sizeof sb_key_ecdsa_p256);
    if (ret == 0) ret = mbedtls_ecp_check_pubkey(&grp, &q);
    if (ret == 0) ret = mbedtls_mpi_read_binary(&r, sb_sig_ecdsa_p256, 32);
    if (ret == 0) ret = mbedtls_mpi_read_binary(&s, sb_sig_ecdsa_p256 + 32, 32);
    if (ret == 0) ret = mbedtls_ecdsa_verify(&grp, digest, SB_DIGEST_LEN, &q, &r, &s);

    mbedtls_mpi_free(&s);
    mbedtls_mpi_free(&r);
    mbedtls_ecp_point_free(&q);
    mbedtls_ecp_group_free(&grp);
    if (ret == 0) return SB_OK;
    return ret == MBEDTLS_ERR_ECP_VERIFY_FAILED ? SB_ERR_SIGNATURE : SB_ERR_CRYPTO;
}

SB_REGION int sb_boot_ecdsa_p256(const uint8_t *image, size_t len)
{
    uint8_t digest[SB_DIGEST_LEN];
    if (!header_ok(&sb_hdr_ecdsa_p256, SB_ALG_ECDSA_P256, len)) return SB_ERR_HEADER;
    /* The header must name the key this bootloader holds. */
    if (mbedtls_sha256_ret(sb_key_ecdsa_p256, sizeof sb_key_ecdsa_p256, digest, 0) != 0) return SB_ERR_CRYPTO;
    if (!ct_equal(digest, sb_hdr_ecdsa_p256.check, SB_DIGEST_LEN)) return SB_ERR_KEY_HINT;
    if (sb_hash_ecdsa_p256(image, len, digest) != 0) return SB_ERR_CRYPTO;
    return sb_verify_ecdsa_p256(digest);
}

/* ---- The image ------------------------------------------------------------------------------ */

/* The image under test, in RAM (a real bootloader reads it from its slot in flash). */
static uint8_t boot_image[SB_IMAGE_LEN] __attribute__((aligned(4)));

/* The image generator (gen_image_keys.py has the same in Python): xorshift32 (Marsaglia 2003,
 * shifts 13, 17, 5) from SB_IMAGE_SEED; each state after a step gives 4 bytes, little-endian. */
static void image_fill(uint8_t *image, size_t len, uint32_t seed)
{
    uint32_t x = seed;
    for (size_t i = 0; i + 4 <= len; i += 4) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        image[i] = (uint8_t)x;
        image[i + 1] = (uint8_t)(x >> 8);
        image[i + 2] = (uint8_t)(x >> 16);
        image[i + 3] = (uint8_t)(x >> 24);
    }
}

/* The byte the tampered boot changes (mid-image), and how. Applying it twice restores it. */
#define TAMPER_OFFSET (SB_IMAGE_LEN / 2u + 7u)
static void tamper(void) { boot_image[TAMPER_OFFSET] ^= 0x01u; }

/* ---- main ----------------------------------------------------------------------------------- */

static void expect_boot(const char *row, int status)
{
    if (status != SB_OK) {
        printf("%s: FAIL genuine image rejected (status %d)\n", row, status);
        exit(1);
    }
    printf("%s: boot ok\n", row);
}

/* A tampered image must be rejected, and for the right reason (`want`): a digest that does not
 * match, or a signature that does not verify, not some earlier failure. */
static void expect_reject(const char *row, int status, int want)
{
    if (status == SB_OK) {
        printf("%s: FAIL tampered image booted\n", row);
        exit(1);
    }
    if (status != want) {
        printf("%s: FAIL tampered image rejected with status %d, expected %d\n", row, status, want);
        exit(1);
    }
    printf("%s: tampered image rejected\n", row);
}

int main(void)
{
    printf("bootloader (mbedtls %s)\n", MBEDTLS_VERSION_STRING);
    image_fill(boot_image, sizeof boot_image, SB_IMAGE_SEED);

    expect_boot("sha256", sb_boot_sha256(boot_image, sizeof boot_image));
    tamper();
    expect_reject("sha256", sb_boot_sha256(boot_image, sizeof boot_image), SB_ERR_DIGEST);
    tamper();

    expect_boot("ecdsa_p256", sb_boot_ecdsa_p256(boot_image, sizeof boot_image));
    tamper();
    expect_reject("ecdsa_p256", sb_boot_ecdsa_p256(boot_image, sizeof boot_image), SB_ERR_SIGNATURE);
    tamper();

    printf("all rows passed\n");
    return 0;
}
