/* One checksum algorithm per source file (crc32.c, adler32.c); the Makefile's ALG picks it. */
#include <stddef.h>
#include <stdint.h>

extern const char checksum_name[];
/* The algorithm's published check value: the checksum of the ASCII string "123456789". */
extern const uint32_t checksum_check_value;
uint32_t checksum(const uint8_t *p, size_t n);
