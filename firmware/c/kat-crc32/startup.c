/* Vector table and reset handler for the C KAT firmware (Cortex-M, no C library start-up), also
 * used by hostile-*, kernels-*, heap-test and kat-float (firmware/c/build.sh). */
#include <stdint.h>

extern uint32_t __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[];
extern uint32_t __stack_bottom[], __stack_top[];
int main(void);
void HardFault_Handler(void);
void SysTick_Handler(void);
void Default_Handler(void);
/* The SVCall vector; a firmware may name its own handler with -DSVC_HANDLER=<function>. */
#ifndef SVC_HANDLER
#define SVC_HANDLER Default_Handler
#endif
void SVC_HANDLER(void);

/* On a core with an FPU (built with __ARM_FP: -mfloat-abi=hard or softfp), the reset handler
 * first gives CP10/CP11 (the FPU) full access in CPACR, so floating-point code runs; without it
 * the first FP instruction faults (UsageFault NOCP, escalated to HardFault). -DSTARTUP_FPU_OFF
 * leaves the FPU off, for the test that shows that fault. */
#if defined(__ARM_FP) && !defined(STARTUP_FPU_OFF)
/* CPACR (0xE000ED88): CP10 = bits 21:20, CP11 = bits 23:22, 0b11 = full access. The DSB makes
 * the write complete and the ISB refetches, so the next instruction may be an FP one. */
#define ENABLE_FPU "ldr r0, =0xE000ED88\n"           \
                   "ldr r1, [r0]\n"                  \
                   "orr r1, r1, #(0xF << 20)\n"      \
                   "str r1, [r0]\n"                  \
                   "dsb\n"                           \
                   "isb\n"
#else
#define ENABLE_FPU ""
#endif

/* Enables the FPU (FPU builds), paints the whole stack with 0xcccccccc before anything uses it
 * (registers only), then initialises .data/.bss and calls main. */
__attribute__((naked, noreturn)) void Reset_Handler(void)
{
    __asm__ volatile(ENABLE_FPU
                     "ldr r0, =__stack_bottom\n"
                     "ldr r1, =__stack_top\n"
                     "ldr r2, =0xcccccccc\n"
                     "1: cmp r0, r1\n"
                     "bhs 2f\n"
                     "str r2, [r0]\n"
                     "adds r0, #4\n"
                     "b 1b\n"
                     "2: b reset_c\n");
}

__attribute__((used, noreturn)) void reset_c(void)
{
    for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;) *d++ = *s++;
    for (uint32_t *d = __bss_start; d < __bss_end;) *d++ = 0;
    main();
    for (;;) {}
}

typedef void (*vector)(void);

__attribute__((section(".vector_table"), used)) const vector vector_table[16] = {
    (vector)__stack_top, /* initial SP */
    Reset_Handler,
    Default_Handler,   /* NMI */
    HardFault_Handler,
    Default_Handler,   /* MemManage */
    Default_Handler,   /* BusFault */
    Default_Handler,   /* UsageFault */
    0, 0, 0, 0,
    SVC_HANDLER,       /* SVCall */
    Default_Handler,   /* DebugMonitor */
    0,
    Default_Handler,   /* PendSV */
    SysTick_Handler,
};
