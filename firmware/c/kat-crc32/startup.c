/* Vector table and reset handler for the C KAT firmware (Cortex-M, no C library start-up). */
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

/* Paints the whole stack with 0xcccccccc before anything uses it (registers only), then
 * initialises .data/.bss and calls main. */
__attribute__((naked, noreturn)) void Reset_Handler(void)
{
    __asm__ volatile("ldr r0, =__stack_bottom\n"
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
