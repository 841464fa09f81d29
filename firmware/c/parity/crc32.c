/* CRC-32/ISO-HDLC, bitwise (as firmware/c/kat-crc32): the "library" whose function the parity
 * KATs measure, in a file of its own with external linkage, as an algorithm under test usually
 * is. */
#include "parity.h"

uint32_t crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}
