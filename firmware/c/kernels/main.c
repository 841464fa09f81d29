/* Timing-kernel firmware: runs the microbenchmark kernels of sim/timing/kernels/<KERNELS>.S (armv7m: also
 * armv7m-refill.S),
 * each once inside its own region markers (region id = position in the table below), so the
 * host can compare the QEMU plugin's cycle estimate of each region with the TRM-derived totals
 * in the .S comments (sim/mcubench/tests/kernels_e2e.rs); k_svc (firmware/c/kernels/harness.S)
 * takes an exception inside its region, for the exception entry/return costs. Region 0 is k_empty, which measures
 * the constant marker overhead. Ends with the `end` record. Build: firmware/c/build.sh. */
#define MCUBENCH_IMPL
#include "mcubench.h"

void mb_run_kernel(uint32_t id, void (*kernel)(void));
void k_empty(void);

#if defined(KERNELS_ARMV6M)
void k_delay(void), k_loads(void), k_ldm(void), k_mul(void), k_svc(void);
static void (*const kernels[])(void) = {k_empty, k_delay, k_loads, k_ldm, k_mul, k_svc};
#elif defined(KERNELS_ARMV7M)
void k_delay(void), k_loads(void), k_chase(void), k_ldm(void), k_branch(void), k_mac(void), k_tbb(void),
    k_svc(void), k_wide(void), k_wide_aligned(void), k_stld(void), k_bxr(void), k_cbz(void), k_call(void),
    k_strwb(void), k_spec(void), k_wide_load(void), k_ldr_straddle(void), k_ldr_aligned(void);
static void (*const kernels[])(void) = {
    k_empty, k_delay, k_loads, k_chase, k_ldm, k_branch, k_mac, k_tbb, k_svc, k_wide,
    k_wide_aligned, k_stld, k_bxr, k_cbz, k_call, k_strwb, k_spec, k_wide_load, k_ldr_straddle, k_ldr_aligned};
#elif defined(KERNELS_ARMV8M)
void k33_pair(void), k33_loads(void), k33_mul(void), k_svc(void), k33_flags(void), k33_extend(void), k33_return(void),
    k33_bxlr(void);
static void (*const kernels[])(void) = {k_empty,   k33_pair,   k33_loads,  k33_mul, k_svc,
                                        k33_flags, k33_extend, k33_return, k33_bxlr};
#elif defined(KERNELS_ARMV7EM_M7)
void k7_pair(void), k7_late(void), k7_loads(void), k7_ldb(void), k7_mac(void), k7_shift(void), k7_bitfield(void),
    k7_stores(void), k_svc(void), k7_extend(void), k7_early(void);
static void (*const kernels[])(void) = {k_empty,  k7_pair,     k7_late,   k7_loads, k7_ldb,    k7_mac,
                                        k7_shift, k7_bitfield, k7_stores, k_svc,    k7_extend, k7_early};
#elif defined(KERNELS_ARMV7EM_FP)
void k_fmac(void), k_fdiv(void), k_dsp(void);
static void (*const kernels[])(void) = {k_empty, k_fmac, k_fdiv, k_dsp};
#else
#error "define KERNELS_ARMV6M, KERNELS_ARMV7M, KERNELS_ARMV8M, KERNELS_ARMV7EM_M7 or KERNELS_ARMV7EM_FP"
#endif

int main(void)
{
    mb_session s;
    /* The FPU (armv7em-fp) is on: kat-crc32/startup.c enables it at reset. */
    mb_begin(&s, "timing-kernels");
    for (uint32_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) mb_run_kernel(i, kernels[i]);
    mb_end(&s);
}
