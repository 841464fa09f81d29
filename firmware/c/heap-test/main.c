/* heap-test: malloc/free with known sizes, for the heap measurement (MCUBENCH_HEAP in
 * mcubench.h). Built with -DMCUBENCH_HEAP and newlib-nano's malloc; the expected numbers are
 * asserted by sim/mcubench/tests/heap.rs:
 *
 * - heap/none: no allocation before it, so its record has no `heap=` (the heap is unused yet).
 * - heap/3000: malloc(3000), fill, free: takes 3000 B plus malloc's chunk overhead from _sbrk.
 * - heap/1000-reuse: malloc(1000) after that free: served from the freed chunk, so the break
 *   does not move and the operation takes 0 B more.
 * - heap/2x4000: two live blocks of 4000 B: the freed 3000 B chunk is too small for either, so
 *   the heap grows by at least 8000 - 3000 B.
 * - heap/refused: malloc(4 MiB - 64 KiB) is more than the room between .bss and the stack
 *   reserve (MB_HEAP_STACK_RESERVE below the initial SP): _sbrk refuses, malloc returns NULL
 *   (out = "NULL") and the break does not move (0 B).
 * Each KAT's `out` is a checksum of the bytes it wrote, so a block that was not really there
 * (or overlapped another) fails the run. */
#define MCUBENCH_IMPL
#include "mcubench.h"

#include <stdlib.h>

struct job {
    size_t a, b; /* block sizes; b = 0: one block */
    uint32_t sum;
};

static uint32_t fill(uint8_t *p, size_t n, uint8_t seed)
{
    uint32_t s = 0;
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(i * 7u + seed);
    for (size_t i = 0; i < n; i++) s = s * 31u + p[i];
    return s;
}

static void none(void *ctx)
{
    struct job *j = ctx;
    uint8_t local[16];
    j->sum = fill(local, sizeof local, 1);
}

static void allocate(void *ctx)
{
    struct job *j = ctx;
    uint8_t *p = malloc(j->a), *q = j->b ? malloc(j->b) : NULL;
    if (!p || (j->b && !q)) {
        j->sum = 0;
    } else {
        j->sum = fill(p, j->a, 3);
        if (q) j->sum ^= fill(q, j->b, 5);
        /* Re-read the first block after the second was written: overlap would change it. */
        for (size_t i = 0; i < j->a; i++)
            if (p[i] != (uint8_t)(i * 7u + 3)) j->sum = 0;
    }
    free(q);
    free(p);
}

#define NULL_SUM 0x4e554c4cu /* "NULL" */

static void refuse(void *ctx)
{
    struct job *j = ctx;
    uint8_t *p = malloc(j->a);
    j->sum = p ? 0 : NULL_SUM;
    free(p);
}

static uint32_t expected_sum(size_t a, size_t b)
{
    static uint8_t scratch[4000];
    uint32_t s = fill(scratch, a, 3);
    if (b) s ^= fill(scratch, b, 5);
    return s;
}

static void be32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24); b[1] = (uint8_t)(v >> 16); b[2] = (uint8_t)(v >> 8); b[3] = (uint8_t)v;
}

int main(void)
{
    static const struct {
        const char *id;
        void (*op)(void *);
        size_t a, b;
    } tests[] = {
        {"heap/none", none, 16, 0},
        {"heap/3000", allocate, 3000, 0},
        {"heap/1000-reuse", allocate, 1000, 0},
        {"heap/2x4000", allocate, 4000, 4000},
        {"heap/refused", refuse, 4u * 1024u * 1024u - 64u * 1024u, 0},
    };
    mb_session s;
    mb_begin(&s, "heap-test-c");
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        struct job j = {tests[i].a, tests[i].b, 0};
        mb_measurement m = mb_measure(tests[i].op, &j);
        uint8_t out[4], exp[4];
        be32(out, j.sum);
        if (tests[i].op == none) {
            uint8_t local[16];
            be32(exp, fill(local, sizeof local, 1));
        } else if (tests[i].op == refuse) {
            be32(exp, NULL_SUM);
        } else {
            be32(exp, expected_sum(tests[i].a, tests[i].b));
        }
        mb_kat(&s, tests[i].id, "heap-test", "compute", out, exp, 4, m);
    }
    mb_end(&s);
}
