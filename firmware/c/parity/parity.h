#ifndef PARITY_H
#define PARITY_H
#include <stddef.h>
#include <stdint.h>

/* crc32.c: CRC-32/ISO-HDLC of n bytes. */
uint32_t crc32(const uint8_t *p, size_t n);

/* ops.c: one KAT operation each; ctx points at the uint32_t that receives the CRC. */
void kat_crc32_empty(void *ctx);
void kat_crc32_a(void *ctx);
void kat_crc32_check(void *ctx);
void kat_crc32_fox(void *ctx);

#endif
