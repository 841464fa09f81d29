/* Adler-32 (RFC 1950), with the modulo deferred over blocks of 5552 bytes as zlib does. */
#include "checksum.h"

const char checksum_name[] = "adler32";
const uint32_t checksum_check_value = 0x091E01DEu;

uint32_t checksum(const uint8_t *p, size_t n)
{
    uint32_t a = 1, b = 0;
    while (n > 0) {
        size_t block = n < 5552 ? n : 5552;
        n -= block;
        while (block--) {
            a += *p++;
            b += a;
        }
        a %= 65521u;
        b %= 65521u;
    }
    return (b << 16) | a;
}
