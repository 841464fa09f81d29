/* A board benchmark written the way teams time code on a board, never having heard of mcubench:
 * it enables the DWT cycle counter (DEMCR.TRCENA, DWT_CTRL.CYCCNTENA), reads DWT_CYCCNT before
 * and after each call of the measured function, and prints the difference with printf (newlib,
 * semihosting), then exits 0. QEMU does not model the counter (it reads 0), so the printed
 * figures are 0 here; mcubench reports the estimated cycles between the reads instead, and with
 * `cycle-counter: estimated` the reads return the estimate, so the firmware prints it
 * (sim/mcubench/tests/any_firmware.rs).
 *
 * - bench_crc32(): three timed calls of crc32(buf, 64), as a benchmark loop does.
 * - poll(): reads the counter SPINS times in a loop (a device read per iteration); -DSPINS=2000
 *   builds the same firmware with 1000 more iterations, so two builds differ by exactly 1000
 *   iterations of that loop.
 * -DWAIT_ON_COUNTER first waits DELAY (1000) cycles on the counter, as a driver's delay does:
 * under QEMU, where the counter stays 0, that wait never ends (it does with `cycle-counter:
 * estimated`; -DDELAY=100000000, 0.6 s at 168 MHz, takes hours there: each poll stops QEMU).
 * -DRESET_COUNTER times the calls the other common way: it zeroes the counter before the call
 * (`DWT->CYCCNT = 0`) and prints what it reads after it.
 * -DCRC_BYTES=80 -DWARMUP is the pull request that makes the timed call slower (80 bytes a call
 * instead of 64) and moves the reads (an untimed warm-up call before them), for `mcubench diff`
 * and budgets on the reads' names, which survive the move. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DEMCR (*(volatile uint32_t *)0xE000EDFCu)
#define DWT_CTRL (*(volatile uint32_t *)0xE0001000u)
#define DWT_CYCCNT (*(volatile uint32_t *)0xE0001004u)

#ifndef SPINS
#define SPINS 1000
#endif
#ifndef DELAY
#define DELAY 1000
#endif
#ifndef CRC_BYTES
#define CRC_BYTES 64
#endif
#define TEXT(x) #x
#define STR(x) TEXT(x)

static uint8_t buf[256];

__attribute__((noipa)) uint32_t crc32(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}

__attribute__((noipa)) void bench_crc32(void)
{
#ifdef WARMUP
    (void)crc32(buf, 16);
#endif
    for (int run = 0; run < 3; run++) {
#ifdef RESET_COUNTER
        DWT_CYCCNT = 0;
        uint32_t crc = crc32(buf, CRC_BYTES);
        uint32_t cycles = DWT_CYCCNT;
#else
        uint32_t start = DWT_CYCCNT;
        uint32_t crc = crc32(buf, CRC_BYTES);
        uint32_t cycles = DWT_CYCCNT - start;
#endif
        printf("crc32(" STR(CRC_BYTES) " B) = %08lx: %lu cycles\n", (unsigned long)crc, (unsigned long)cycles);
    }
}

__attribute__((noipa)) uint32_t poll(int n)
{
    uint32_t x = 0;
    for (int i = 0; i < n; i++) {
        x += DWT_CYCCNT;
        x ^= x << 3;
    }
    return x;
}

__attribute__((noipa)) void delay_cycles(uint32_t n)
{
    uint32_t start = DWT_CYCCNT;
    while (DWT_CYCCNT - start < n) {
    }
}

int main(void)
{
    DEMCR |= 1u << 24;
    DWT_CTRL |= 1u;
#ifdef WAIT_ON_COUNTER
    delay_cycles(DELAY);
#endif
    for (int i = 0; i < 256; i++) buf[i] = (uint8_t)(i * 31 + 7);
    bench_crc32();
    printf("poll: %lu\n", (unsigned long)poll(SPINS));
    return 0;
}
