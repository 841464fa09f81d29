/* C KAT firmware: CRC-32 (CRC-32/ISO-HDLC: reflected, polynomial 0xEDB88320, init and final
 * xor 0xFFFFFFFF, as in zlib/Ethernet), bitwise, reported through the mcubench protocol.
 * Expected values: the catalogue check value for "123456789" (cbf43926) and values checked
 * with Python's zlib.crc32. `out` is the CRC as 4 big-endian bytes. */
#define MCUBENCH_IMPL
#include "mcubench.h"

#ifdef CRC32_TABLE
/* The table-driven variant (built as kat-crc32-table.elf): 1 KiB more flash, fewer instructions.
 * The CI-report tests diff it against the bitwise build, so the difference is known. */
#include "crc32_table.h"

static uint32_t crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    while (n--) c = crc32_table[(c ^ *p++) & 0xffu] ^ (c >> 8);
    return ~c;
}
#else
static uint32_t crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}
#endif

struct vec {
    const char *id;
    const char *msg;
    size_t len;
    uint32_t crc;
};

static const struct vec vectors[] = {
    {"crc32/empty", "", 0, 0x00000000u},
    {"crc32/a", "a", 1, 0xe8b7be43u},
    {"crc32/check-123456789", "123456789", 9, 0xcbf43926u},
    {"crc32/quick-brown-fox", "The quick brown fox jumps over the lazy dog", 43, 0x414fa339u},
};

struct job {
    const struct vec *v;
    uint32_t out;
};

static void run(void *ctx)
{
    struct job *j = ctx;
    j->out = crc32((const uint8_t *)j->v->msg, j->v->len);
}

static void be32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24); b[1] = (uint8_t)(v >> 16); b[2] = (uint8_t)(v >> 8); b[3] = (uint8_t)v;
}

int main(void)
{
    mb_session s;
    mb_begin(&s, "kat-crc32-c");
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        struct job j = {&vectors[i], 0};
        mb_measurement m = mb_measure(run, &j);
        uint8_t out[4], exp[4];
        be32(out, j.out);
        be32(exp, vectors[i].crc);
        mb_kat(&s, vectors[i].id, "CRC-32", "hash", out, exp, 4, m);
    }
    mb_end(&s);
}
