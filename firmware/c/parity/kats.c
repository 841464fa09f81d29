/* C on par with Rust: CRC-32 KATs through mcubench.h's mb_measure/mb_kat, whose region markers
 * give every KAT an exact instruction count and a cycle estimate. Each KAT's operation is a
 * function of its own (ops.c) over crc32 (crc32.c). firmware/c/build.sh builds it as a matrix,
 * parity-<layout>-<opt>[-lto].elf: -O0/-O2/-O3/-Os, each with and without -flto, with
 * MCUBENCH_IMPL in this file (`same`, -DPARITY_IMPL_HERE) or in impl.c (`separate`). The markers
 * must come out the same in every build: two external functions of exactly their names, never
 * inlined, cloned (.constprop/.isra) or renamed (.lto_priv); sim/mcubench/tests/c_parity.rs
 * checks that and the counts. Besides the KATs, main marks a region by hand with a constant id
 * (as a C user may): the calls GCC -O3 turned into `mcubench_region_enter.constprop.0` (and the
 * run into a setup error) before the markers were noipa. */
#ifdef PARITY_IMPL_HERE
#define MCUBENCH_IMPL
#endif
#include "mcubench.h"

#include "parity.h"

/* Not used by mb_measure (it counts up from 0): the hand-marked region's id. */
#define HAND_REGION 255u

static const struct {
    const char *id;
    void (*op)(void *);
    uint32_t crc;
} kats[] = {
    {"crc32/empty", kat_crc32_empty, 0x00000000u},
    {"crc32/a", kat_crc32_a, 0xe8b7be43u},
    {"crc32/check-123456789", kat_crc32_check, 0xcbf43926u},
    {"crc32/quick-brown-fox", kat_crc32_fox, 0x414fa339u},
};

static void be32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24); b[1] = (uint8_t)(v >> 16); b[2] = (uint8_t)(v >> 8); b[3] = (uint8_t)v;
}

static volatile uint32_t sink;

int main(void)
{
    mb_session s;
    mb_begin(&s, "kat-crc32-parity");
    /* Hand-marked regions with a constant id, outside every KAT: with the definition in view and
     * called in a loop, GCC -O3 specialises non-noipa markers for the constant. */
    for (uint32_t i = 0; i < 3; i++) {
        mcubench_region_enter(HAND_REGION);
        sink = sink * 33u + i;
        mcubench_region_exit(HAND_REGION);
    }
    for (size_t i = 0; i < sizeof kats / sizeof kats[0]; i++) {
        uint32_t crc = 0;
        mb_measurement m = mb_measure(kats[i].op, &crc);
        uint8_t out[4], exp[4];
        be32(out, crc);
        be32(exp, kats[i].crc);
        mb_kat(&s, kats[i].id, "CRC-32", "hash", out, exp, 4, m);
    }
    mb_end(&s);
}
