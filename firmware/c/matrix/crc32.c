/* CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), bitwise. */
#include "checksum.h"

const char checksum_name[] = "crc32";
const uint32_t checksum_check_value = 0xCBF43926u;

uint32_t checksum(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}
