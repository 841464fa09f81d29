/* Ordinary GCC + newlib firmware for the stack analyzer's whole-program test
 * (sim/stack/tests/stack_newlib.rs): printf (integers, strings and, with _printf_float, doubles),
 * malloc/free, soft-double arithmetic (unsigned → double conversion, division), semihosting exit
 * through rdimon. No mcubench header and no stack annotations.
 *
 * Measurement: the start-up paints the stack region below its own SP; `_exit` is wrapped
 * (-Wl,--wrap=_exit) to find the lowest overwritten word and print the high-water mark below
 * the initial SP (`__stack_top`) with a semihosting SYS_WRITE0, before the real `_exit`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern uint32_t __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[];
extern uint32_t __stack_top[];
void initialise_monitor_handles(void);
int main(void);
void Default_Handler(void);

#define PAINT 0xC5C5C5C5u
/* The painted region: from this far below the top of RAM up to the start-up's own SP. The heap
 * (newlib's _sbrk, from `end` up) stays far below it (-DPAINT_BYTES=... for a small RAM). */
#ifndef PAINT_BYTES
#define PAINT_BYTES (24u * 1024u)
#endif

static void semihost_write0(const char *s)
{
    register uintptr_t r0 __asm__("r0") = 0x04; /* SYS_WRITE0 */
    register const char *r1 __asm__("r1") = s;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
}

void __real__exit(int rc) __attribute__((noreturn));
void __wrap__exit(int rc) __attribute__((noreturn));
void __wrap__exit(int rc)
{
    uint32_t *p = (uint32_t *)((uintptr_t)__stack_top - PAINT_BYTES);
    while (p < __stack_top && *p == PAINT) p++;
    uint32_t used = (uint32_t)((uintptr_t)__stack_top - (uintptr_t)p);
    char line[40] = "STACK-HWM ";
    char digits[12];
    int n = 0;
    do {
        digits[n++] = (char)('0' + used % 10);
        used /= 10;
    } while (used);
    int k = 10;
    while (n) line[k++] = digits[--n];
    line[k++] = '\n';
    line[k] = 0;
    semihost_write0(line);
    __real__exit(rc);
}

__attribute__((noreturn, naked)) void Reset_Handler(void)
{
    /* Paint before any C runs (naked: no frame), from __stack_top - PAINT_BYTES up to SP. */
    __asm__ volatile(
        ".syntax unified\n" /* GCC's Thumb-1 inline asm is in divided syntax otherwise */
#if defined(__ARM_FP)
        /* Hard-float builds: FPU access (CPACR CP10/CP11) before any C. */
        "ldr r0, =0xE000ED88\n"
        "ldr r1, [r0]\n"
        "orr r1, r1, #(0xF << 20)\n"
        "str r1, [r0]\n"
        "dsb\n"
        "isb\n"
#endif
        "ldr r0, =__stack_top\n"
        "ldr r1, =%0\n"
        "subs r0, r0, r1\n"
        "ldr r1, =0xC5C5C5C5\n"
        "mov r2, sp\n"
        "1: cmp r0, r2\n"
        "bhs 2f\n"
#if defined(__ARM_ARCH_6M__)
        /* ARMv6-M: no post-indexed store, and B reaches only 2 KiB (reset_c does not return). */
        "str r1, [r0]\n"
        "adds r0, r0, #4\n"
        "b 1b\n"
        "2: bl reset_c\n" ::"i"(PAINT_BYTES));
#else
        "str r1, [r0], #4\n"
        "b 1b\n"
        "2: b reset_c\n" ::"i"(PAINT_BYTES));
#endif
}

__attribute__((noreturn, used)) void reset_c(void)
{
    for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;) *d++ = *s++;
    for (uint32_t *d = __bss_start; d < __bss_end;) *d++ = 0;
    initialise_monitor_handles();
    exit(main());
}

__attribute__((noreturn)) void Default_Handler(void)
{
    for (;;) {}
}

typedef void (*vector)(void);
__attribute__((section(".vector_table"), used)) const vector vector_table[16] = {
    (vector)__stack_top, Reset_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, 0, 0, 0, 0, Default_Handler, Default_Handler, 0, Default_Handler, Default_Handler,
};

#ifdef NEWLIB3_SYMBOL
/* newlib 3.x's stdio cleanup, by name only: with newlib 4 linked, the ELF's symbols say "not only 4.x". */
void _cleanup_r(void);
void _cleanup_r(void) {}
#endif

#ifdef NEWLIB4_SYMBOL
/* newlib 4.x's stdio walker, by name only: makes the ELF's symbols say "another newlib". */
void _fwalk_sglue(void);
void _fwalk_sglue(void) {}
#endif

/* The program: something a C team writes on day one. */
struct item {
    unsigned id;
    double weight;
    char name[12];
};

static double mean(const struct item *v, unsigned n)
{
    double s = 0;
    for (unsigned i = 0; i < n; i++) s += v[i].weight;
    return n ? s / n : 0;
}

int main(void)
{
    unsigned n = 24;
    struct item *v = malloc(n * sizeof *v);
    if (!v) return 2;
    for (unsigned i = 0; i < n; i++) {
        v[i].id = i * 7u + 3u;
        v[i].weight = (double)v[i].id / 3.0 + (double)(i % 5); /* __aeabi_ui2d, __aeabi_ddiv */
        snprintf(v[i].name, sizeof v[i].name, "item-%u", v[i].id);
    }
    double m = mean(v, n);
    long milli = (long)(m * 1000.0);
    printf("%u items, mean weight %ld.%03ld, first %s, last %s\n", n, milli / 1000, milli % 1000, v[0].name,
           v[n - 1].name);
#ifdef PRINT_FLOAT
    printf("mean %f\n", m);
#endif
    char *copy = strdup(v[n / 2].name);
    puts(copy);
    free(copy);
    free(v);
    fflush(stdout);
    return 0;
}
