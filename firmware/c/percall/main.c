/* Per-call measurement test firmware (sim/mcubench/tests/percall.rs): one function called with
 * several sizes from several callers, a function that always processes 64 bytes, and KATs that
 * report the bytes they processed (`bytes=`, -DMCUBENCH_BYTES).
 *
 * - crc32(p, n): bitwise CRC-32 (as firmware/c/kat-crc32), branch-free per bit, so its
 *   instructions and cycles depend on n alone. Called from by_size() with 16, 64 and 256 bytes
 *   (three call sites), from twice() with 64 bytes twice (two call sites), from run() (the
 *   mb_measure KAT, 9 bytes) and from main() (the marked KAT, 256 bytes).
 * - crc32_64(p): the same CRC over exactly 64 bytes, its own code (no call), called 3 times
 *   from main(). Their results and by_size()'s and twice()'s make KAT percall/workload.
 * - KAT crc32/check-123456789 through mb_measure/mb_kat with m.bytes = 9 (mb_measure's region
 *   markers: region 0); KAT crc32/256-marked wraps crc32(buf, 256) in region markers of its own
 *   (region 1, the next id) and writes its record with region=1 and bytes=256 by hand, so the
 *   host has both exact counts and cycles.
 *
 * noipa keeps GCC from cloning or constant-propagating into the measured functions, so each is
 * one function with its real arguments. buf[i] = i * 31 + 7; CRCs from Python's zlib.crc32. */
#define MCUBENCH_IMPL
#define MCUBENCH_BYTES
#include "mcubench.h"

static uint8_t buf[256];

static inline __attribute__((always_inline)) uint32_t crc32_core(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}

__attribute__((noipa)) uint32_t crc32(const uint8_t *p, size_t n)
{
    return crc32_core(p, n);
}

__attribute__((noipa)) uint32_t crc32_64(const uint8_t *p)
{
    return crc32_core(p, 64);
}

/* Three call sites, sizes 16, 64, 256; none a tail call. */
__attribute__((noipa)) uint32_t by_size(void)
{
    uint32_t x = crc32(buf, 16);
    x ^= crc32(buf, 64);
    x ^= crc32(buf, 256);
    return x;
}

/* Two call sites, 64 bytes each (different data, same cost). */
__attribute__((noipa)) uint32_t twice(void)
{
    uint32_t a = crc32(buf, 64);
    return a ^ crc32(buf + 64, 64);
}

struct job {
    const uint8_t *msg;
    size_t len;
    uint32_t out;
};

static void run(void *ctx)
{
    struct job *j = ctx;
    j->out = crc32(j->msg, j->len);
}

static void be32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24); b[1] = (uint8_t)(v >> 16); b[2] = (uint8_t)(v >> 8); b[3] = (uint8_t)v;
}

int main(void)
{
    mb_session s;
    uint8_t out[4], exp[4];
    for (int i = 0; i < 256; i++) buf[i] = (uint8_t)(i * 31 + 7);
    mb_begin(&s, "percall");

    /* A KAT through mb_measure that says how many bytes it hashed. */
    struct job j = {(const uint8_t *)"123456789", 9, 0};
    mb_measurement m = mb_measure(run, &j);
    m.bytes = 9;
    be32(out, j.out);
    be32(exp, 0xcbf43926u);
    mb_kat(&s, "crc32/check-123456789", "CRC-32", "hash", out, exp, 4, m);

    /* A KAT in region markers, its record written by hand with region= and bytes=. */
    uint64_t t0 = mb_ticks();
    mcubench_region_enter(1);
    uint32_t crc = crc32(buf, 256);
    mcubench_region_exit(1);
    uint64_t t1 = mb_ticks();
    be32(out, crc);
    be32(exp, 0x0ce9d363u);
    int pass = crc == 0x0ce9d363u;
    mb_line l;
    mb_record(&l, "kat");
    mb_text(&l, "id", "crc32/256-marked");
    mb_text(&l, "alg", "CRC-32");
    mb_text(&l, "op", "hash");
    mb_text(&l, "result", pass ? "pass" : "fail");
    mb_dec(&l, "ticks", t1 - t0);
    mb_dec(&l, "stack", 0);
    mb_dec(&l, "region", 1);
    mb_dec(&l, "bytes", 256);
    mb_hex(&l, "out", out, 4);
    if (!pass) mb_hex(&l, "expected", exp, 4);
    mb_emit(&l);
    if (pass) s.passed++; else s.failed++;

    /* The function regions' workload, checked against Python's zlib.crc32 (not recomputed here:
     * that would add calls). */
    uint32_t x = by_size() ^ twice();
    for (int i = 0; i < 3; i++) x ^= crc32_64(buf + 64 * i);
    be32(out, x);
    be32(exp, 0x9fdd6ad0u);
    mb_measurement none = {0};
    none.region = MB_NO_REGION; /* not measured: no region= */
    mb_kat(&s, "percall/workload", "CRC-32", "hash", out, exp, 4, none);
    mb_end(&s);
}
