/* The KATs' operations, one function per KAT, each called once per run (through mb_measure's
 * function pointer): so a scenario's `regions: [<function>]` measures exactly one KAT, which the
 * c_parity test compares with the KAT's own count between the region markers. In a file of
 * their own, so that without LTO the compiler cannot inline them into mb_measure. */
#include "parity.h"

#define OP(name, msg)                                                                              \
    void name(void *ctx) { *(uint32_t *)ctx = crc32((const uint8_t *)msg, sizeof msg - 1); }

OP(kat_crc32_empty, "")
OP(kat_crc32_a, "a")
OP(kat_crc32_check, "123456789")
OP(kat_crc32_fox, "The quick brown fox jumps over the lazy dog")
