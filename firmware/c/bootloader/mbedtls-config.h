/* Mbed TLS 2.28 configuration of the bootloader (MBEDTLS_CONFIG_FILE, replacing Mbed TLS's
 * include/mbedtls/config.h): verify-only, SHA-256 and ECDSA P-256, nothing else. Modelled on
 * Mbed TLS's configs/config-suite-b.h with the TLS, cipher, entropy and DRBG parts taken out.
 *
 * Library files this needs (firmware/c/bootloader/Makefile compiles exactly these): sha256.c,
 * bignum.c, ecp.c, ecp_curves.c, ecdsa.c, asn1parse.c, asn1write.c (ECDSA_C requires both
 * ASN.1 modules; the raw r, s verify path uses neither, and --gc-sections drops them),
 * platform_util.c (empty with MBEDTLS_PLATFORM_ZEROIZE_ALT, kept for a configuration without it)
 * and constant_time.c. */
#ifndef BOOTLOADER_MBEDTLS_CONFIG_H
#define BOOTLOADER_MBEDTLS_CONFIG_H

/* System support: bn_mul.h's Thumb-2 multiply-accumulate assembly (UMAAL on a DSP core such as
 * the Cortex-M4). No MBEDTLS_HAVE_TIME: a bootloader has no clock. Without MBEDTLS_PLATFORM_C,
 * mbedtls_calloc/mbedtls_free are the C library's calloc/free (newlib's). */
#define MBEDTLS_HAVE_ASM

/* mbedtls_platform_zeroize is the firmware's (main.c: memset and a compiler barrier), not
 * platform_util.c's call of memset through a volatile function pointer: that indirect call
 * would stand for every address-taken function in a static call graph (stack bound, verify
 * code), and the barrier keeps the zeroing as well. */
#define MBEDTLS_PLATFORM_ZEROIZE_ALT

/* Elliptic curves: only NIST P-256, with its fast reduction modulo p. */
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM

/* No internal DRBG for the point multiplication's coordinate randomisation: verification
 * handles public data only (the option's documentation names exactly this case), and it spares
 * the ECP module its dependency on HMAC_DRBG or CTR_DRBG. */
#define MBEDTLS_ECP_NO_INTERNAL_RNG

/* Modules. */
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ECP_C
#define MBEDTLS_SHA256_C

/* Sizes for a 256-bit curve: the MPI limit in bytes, and a small comb window with no cached
 * fixed-point table for the generator (less RAM; the group is loaded per boot anyway). */
#define MBEDTLS_MPI_MAX_SIZE 32
#define MBEDTLS_MPI_WINDOW_SIZE 1
#define MBEDTLS_ECP_MAX_BITS 256
#define MBEDTLS_ECP_WINDOW_SIZE 2
#define MBEDTLS_ECP_FIXED_POINT_OPTIM 0

#include "mbedtls/check_config.h"

#endif /* BOOTLOADER_MBEDTLS_CONFIG_H */
