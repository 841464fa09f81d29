/* stack-probe: an ordinary newlib-nano program for the stack probe (sim/mcubench/tests/
 * stack_probe.rs): malloc of several KB written in full, a recursive function with a 200-byte
 * frame, soft-double arithmetic and printf (newlib's stdio allocates its buffer on the heap),
 * run once inside mb_measure, which paints the stack for the painted high-water mark. An
 * assert() in the recursion that never fails puts newlib's __assert_func (fiprintf, abort) on
 * the deepest path of the static bound, but never runs.
 *
 * Built twice (firmware/c/build.sh): stack-probe.elf with its own link.ld (CMSIS-style heap
 * and stack symbols: __HeapLimit, __StackLimit, __StackTop), whose _sbrk stops at __HeapLimit;
 * stack-probe-noregion.elf with firmware/c/link.ld (-DNO_HEAP_LIMIT), whose heap grows from `end`
 * towards the stack with no symbol between them (_sbrk stops 64 KiB below the initial SP).
 * The heap sits below the stack in both: its stores are far below any stack store. */
#define MCUBENCH_IMPL
#include "mcubench.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 6000u
#define DEPTH 12

extern char end[];
#ifdef NO_HEAP_LIMIT
#define HEAP_LIMIT ((char *)((uintptr_t)__stack_top - 0x10000u))
#else
extern char __HeapLimit[];
#define HEAP_LIMIT __HeapLimit
#endif

/* newlib's malloc grows its heap through _sbrk: from `end` up to HEAP_LIMIT. */
void *_sbrk(ptrdiff_t incr)
{
    static char *brk = end;
    if (incr > HEAP_LIMIT - brk || incr < end - brk) {
        errno = ENOMEM;
        return (void *)-1;
    }
    char *old = brk;
    brk += incr;
    return old;
}

/* newlib's stdout: one semihosting write per buffer. */
int _write(int fd, const char *buf, int len)
{
    (void)fd;
    mb_write(buf, (size_t)len);
    return len;
}

/* Recursion with a 200-byte frame: DEPTH + 1 activations at the deepest point. */
static __attribute__((noinline)) uint32_t deep(int n, const uint8_t *seed)
{
    uint8_t buf[200];
    for (unsigned i = 0; i < sizeof buf; i++) buf[i] = (uint8_t)(seed[i % 4] + n * 3 + i);
    uint32_t s = n > 0 ? deep(n - 1, buf) : 0;
    /* Never fails; its failure path (__assert_func: fiprintf, then abort) starts from the
     * deepest frame, so it dominates the sound bound. */
    assert(s != 0xdeadbeefu);
    for (unsigned i = 0; i < sizeof buf; i++) s = s * 33u + buf[i];
    return s;
}

struct job {
    uint32_t sum;
};

static void work(void *ctx)
{
    struct job *j = ctx;
    uint8_t *block = malloc(BLOCK);
    if (!block) {
        j->sum = 0;
        return;
    }
    for (unsigned i = 0; i < BLOCK; i++) block[i] = (uint8_t)(i * 13u + 7u);
    uint32_t s = deep(DEPTH, block);
    for (unsigned i = 0; i < BLOCK; i += 97) s ^= block[i];
    /* Soft-double (this build has no FPU): __aeabi_ui2d, __aeabi_ddiv, __aeabi_d2uiz. */
    volatile double scaled = (double)s / 3.0;
    printf("stack-probe: sum %lu, scaled %lu\n", (unsigned long)s, (unsigned long)scaled);
    fflush(stdout);
    free(block);
    j->sum = s;
}

int main(void)
{
    mb_session session;
    mb_begin(&session, "stack-probe");
    struct job first = {0}, again = {0};
    mb_measurement m = mb_measure(work, &first);
    /* The same work again, unmeasured: a deterministic program gives the same sum. */
    work(&again);
    mb_kat(&session, "probe/work", "stack-probe", "work", (const uint8_t *)&first.sum,
           (const uint8_t *)&again.sum, sizeof first.sum, m);
    mb_end(&session);
}
