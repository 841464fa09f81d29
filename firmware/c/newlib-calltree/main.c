/* newlib-calltree: an ordinary newlib firmware (rdimon semihosting: printf, malloc, exit), with no
 * mcubench header, for `mcubench profile` under containment (sim/mcubench/tests/contain_profile.rs).
 *
 * It builds a binary tree with malloc and walks it through two mutually recursive functions, so
 * that the run has 2^(DEPTH+1) distinct call paths, as a large C program has. Profiling that
 * many paths makes the TCG plugin's call tree grow in QEMU's vCPU thread until glibc's malloc
 * shrinks that thread's arena for the first time, which opens /proc/sys/vm/overcommit_memory:
 * an open of QEMU's own, after the guest started, in the thread that also serves semihosting.
 * The containment must refuse it without blaming the firmware.
 *
 * Built with -DGUEST_OPEN='"<path>"' (newlib-calltree-open), it then opens <path> itself with
 * fopen(path, "r") (semihosting SYS_OPEN, mode "r"), which the containment must blame on it.
 *
 * Start-up is its own (vector table, .data/.bss, newlib's monitor handles), on firmware/c/link.ld. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef DEPTH
#define DEPTH 14
#endif

struct node {
    struct node *left, *right;
    uint32_t value;
};

static struct node *build(unsigned depth, uint32_t seed)
{
    struct node *n = malloc(sizeof *n);
    if (!n) {
        printf("out of memory at depth %u\n", depth);
        exit(2);
    }
    n->value = seed * 2654435761u;
    n->left = depth ? build(depth - 1, seed * 2 + 1) : NULL;
    n->right = depth ? build(depth - 1, seed * 2 + 2) : NULL;
    return n;
}

static uint32_t walk(const struct node *n);

/* Two functions for the two sides: every path down the tree is a different call path. */
__attribute__((noinline)) static uint32_t walk_left(const struct node *n) { return walk(n) * 3u + 1u; }
__attribute__((noinline)) static uint32_t walk_right(const struct node *n) { return walk(n) ^ 0x5bd1e995u; }

__attribute__((noinline)) static uint32_t walk(const struct node *n)
{
    uint32_t v = n->value;
    if (n->left) v += walk_left(n->left);
    if (n->right) v += walk_right(n->right);
    return v;
}

static void release(struct node *n)
{
    if (!n) return;
    release(n->left);
    release(n->right);
    free(n);
}

int main(void)
{
    struct node *root = build(DEPTH, 0);
    uint32_t sum = walk(root);
    release(root);
    printf("newlib-calltree: depth %d, checksum %08lx\n", DEPTH, (unsigned long)sum);
#ifdef GUEST_OPEN
    FILE *f = fopen(GUEST_OPEN, "r");
    printf("fopen(%s): %s\n", GUEST_OPEN, f ? "opened" : "refused");
    if (f) fclose(f);
#endif
    return 0;
}

/* Start-up. */
extern uint32_t __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[], __stack_top[];
extern void initialise_monitor_handles(void);

__attribute__((noreturn)) void Reset_Handler(void)
{
    for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;) *d++ = *s++;
    for (uint32_t *d = __bss_start; d < __bss_end;) *d++ = 0;
    initialise_monitor_handles();
    exit(main());
}

__attribute__((noreturn)) void Fault_Handler(void)
{
    printf("fault\n");
    exit(3);
}

/* newlib's exit runs the init/fini arrays' hooks. */
void _init(void) {}
void _fini(void) {}

typedef void (*vector)(void);
__attribute__((section(".vector_table"), used)) const vector vector_table[16] = {
    (vector)__stack_top, Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    0, 0, 0, 0, Fault_Handler, Fault_Handler, 0, Fault_Handler, Fault_Handler,
};
