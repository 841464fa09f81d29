/* A plain newlib self-test, written the way firmware that has never heard of mcubench is: printf,
 * malloc, exit; no mcubench.h, no result protocol. Its verdict comes from its own words ("self-test
 * passed" / "FAILED: ...") and its exit code, and it prints two figures of its own for metric
 * captures ("sig bytes: N", "cycles: N").
 *
 * Where the lines go depends only on how it is linked (firmware/c/build.sh):
 *   --specs=rdimon.specs          printf → semihosting (SYS_WRITE to :tt), exit → SYS_EXIT
 *   uart.c + --specs=nosys.specs  printf → the board's UART (uart.c's _write), exit → SYS_EXIT
 * -DSELFTEST_FAIL builds the failing variant: one known answer is wrong on purpose, and it prints
 * "FAILED: ..." and exits with status 1. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CONSOLE_NAME
#define CONSOLE_NAME "semihosting"
#endif

/* Signature-sized buffer, as a post-quantum scheme's test would print (ML-DSA-44: 2420 bytes). */
#define SIG_BYTES 2420

static uint32_t crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

/* SysTick (a core peripheral, the same address on every Cortex-M): down-counter on the core clock.
 * A real board's firmware measures like this; under QEMU the count is whatever its virtual clock
 * says (with -icount, a fixed number of instructions per tick). */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018)

static void systick_start(void)
{
    SYST_RVR = 0x00FFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 5; /* enable, processor clock, no interrupt */
}

static uint32_t systick_now(void) { return SYST_CVR; }

static int failures;

static void check(const char *what, uint32_t got, uint32_t want)
{
    if (got != want) {
        printf("FAILED: %s = 0x%08lx, expected 0x%08lx\n", what, (unsigned long)got, (unsigned long)want);
        failures++;
    } else {
        printf("ok: %s = 0x%08lx\n", what, (unsigned long)got);
    }
}

int main(void)
{
    printf("newlib self-test (console: %s)\n", CONSOLE_NAME);

    /* 1. A known answer: the CRC-32 check value. */
#ifdef SELFTEST_FAIL
    const uint32_t want = 0xCBF43927u; /* wrong on purpose */
#else
    const uint32_t want = 0xCBF43926u;
#endif
    check("crc32(\"123456789\")", crc32((const uint8_t *)"123456789", 9), want);

    /* 2. The heap: a "signature" of SIG_BYTES bytes, filled and checked. */
    uint8_t *sig = malloc(SIG_BYTES);
    if (sig == NULL) {
        printf("FAILED: malloc(%d) returned NULL\n", SIG_BYTES);
        return 1;
    }
    systick_start();
    uint32_t t0 = systick_now();
    for (size_t i = 0; i < SIG_BYTES; i++) sig[i] = (uint8_t)(i * 131u + 7u);
    uint32_t sig_crc = crc32(sig, SIG_BYTES);
    uint32_t t1 = systick_now();
    free(sig);
    check("crc32(sig)", sig_crc, 0x78D93883u);
    printf("sig bytes: %d\n", SIG_BYTES);
    /* SysTick counts down; the 24-bit wrap is handled by the mask. */
    printf("cycles: %lu\n", (unsigned long)((t0 - t1) & 0x00FFFFFFu));

    if (failures != 0) {
        printf("FAILED: %d check(s) failed\n", failures);
        return 1;
    }
    printf("self-test passed\n");
    return 0;
}
