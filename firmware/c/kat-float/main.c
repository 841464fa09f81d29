/* C KAT firmware doing single-precision floating-point work, built with -mfloat-abi=hard
 * -mfpu=fpv4-sp-d16 for mps2-an386 (Cortex-M4F): VFP instructions and the hard-float calling
 * convention (arguments and results in s0..s15). It passes only if the start-up enabled the FPU
 * (kat-crc32/startup.c does when __ARM_FP is defined); kat-float-fpu-off.elf is the same code
 * built with -DSTARTUP_FPU_OFF, whose first FP instruction faults (UsageFault NOCP, escalated to
 * HardFault), for the test of the fault message. Every expected value is exact or correctly
 * rounded IEEE 754 binary32 (the FPU rounds to nearest): `out` is the result's bits, big-endian. */
#define MCUBENCH_IMPL
#include "mcubench.h"

/* Inputs through volatile reads, so the compiler cannot fold the work away at build time. */
static volatile float in_a[8] = {0.5f, 1.25f, -3.0f, 2.0f, 0.75f, -0.125f, 8.0f, 1.5f};
static volatile float in_b[8] = {4.0f, -2.0f, 0.5f, 0.25f, 16.0f, 8.0f, -0.5f, 2.0f};
static volatile float in_two = 2.0f, in_one = 1.0f, in_three = 3.0f, in_x = 1.5f;

/* Hard-float ABI: x arrives in s0 and the result leaves in s0. */
__attribute__((noinline)) static float horner(float x)
{
    /* 0.5 x^3 - 2 x^2 + 0.25 x + 3, exact in binary32 for x = 1.5. */
    return ((0.5f * x - 2.0f) * x + 0.25f) * x + 3.0f;
}

struct job {
    int which;
    float out;
};

static void run(void *ctx)
{
    struct job *j = ctx;
    switch (j->which) {
    case 0: {
        float acc = 0.0f;
        for (int i = 0; i < 8; i++) acc += in_a[i] * in_b[i];
        j->out = acc;
        break;
    }
    case 1: j->out = __builtin_sqrtf(in_two); break; /* vsqrt.f32 (-fno-math-errno) */
    case 2: j->out = in_one / in_three; break;     /* vdiv.f32 */
    default: j->out = horner(in_x); break;
    }
}

static void be32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24); b[1] = (uint8_t)(v >> 16); b[2] = (uint8_t)(v >> 8); b[3] = (uint8_t)v;
}

static uint32_t bits(float f)
{
    uint32_t u;
    __builtin_memcpy(&u, &f, sizeof u);
    return u;
}

int main(void)
{
    static const struct {
        const char *id;
        uint32_t expected;
    } kats[] = {
        /* 2 - 2.5 - 1.5 + 0.5 + 12 - 1 - 4 + 3 = 8.5 */
        {"float/dot8", 0x41080000u},
        /* sqrt(2) rounded to nearest binary32 */
        {"float/sqrt2", 0x3fb504f3u},
        /* 1/3 rounded to nearest binary32 */
        {"float/div-1-3", 0x3eaaaaabu},
        /* 0.5*3.375 - 2*2.25 + 0.375 + 3 = 0.5625 */
        {"float/horner", 0x3f100000u},
    };
    mb_session s;
    mb_begin(&s, "kat-float-c");
    for (int i = 0; i < (int)(sizeof kats / sizeof kats[0]); i++) {
        struct job j = {i, 0.0f};
        mb_measurement m = mb_measure(run, &j);
        uint8_t out[4], exp[4];
        be32(out, bits(j.out));
        be32(exp, kats[i].expected);
        mb_kat(&s, kats[i].id, "binary32", "compute", out, exp, 4, m);
    }
    mb_end(&s);
}
