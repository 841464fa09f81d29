/* Vector table and reset code of the stack-test firmware (mps2-an386, Cortex-M4F).
 * Reset_Handler paints the whole stack with 0xcccccccc (registers only) before anything uses
 * it, then reset_c turns the FPU on, initialises .data/.bss, runs the .init_array constructors
 * and calls main. Besides SysTick, IRQ 0 has a handler that main pends through the NVIC. */
#include <stdint.h>

extern uint32_t __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[];
extern uint32_t __stack_bottom[], __stack_top[];
typedef void (*vector)(void);
extern const vector __init_array_start[], __init_array_end[];
int main(void);
void HardFault_Handler(void);
void SysTick_Handler(void);
void Default_Handler(void);
void Irq0_Handler(void);

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

#define CPACR (*(volatile uint32_t *)0xE000ED88u)

__attribute__((used, noreturn)) void reset_c(void)
{
    CPACR |= 0xfu << 20; /* CP10, CP11: full access (FPU on) */
    __asm__ volatile("dsb\n isb" ::: "memory");
    for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;) *d++ = *s++;
    for (uint32_t *d = __bss_start; d < __bss_end;) *d++ = 0;
    for (const vector *f = __init_array_start; f < __init_array_end; f++) (*f)();
    main();
    for (;;) {}
}

__attribute__((section(".vector_table"), used)) const vector vector_table[16 + 2] = {
    (vector)__stack_top, /* initial SP */
    Reset_Handler,
    Default_Handler,   /* NMI */
    HardFault_Handler,
    Default_Handler,   /* MemManage */
    Default_Handler,   /* BusFault */
    Default_Handler,   /* UsageFault */
    0, 0, 0, 0,
    Default_Handler,   /* SVCall */
    Default_Handler,   /* DebugMonitor */
    0,
    Default_Handler,   /* PendSV */
    SysTick_Handler,
    Irq0_Handler,      /* IRQ 0 (UART 0 RX on the AN386; main pends it by software) */
    Default_Handler,   /* IRQ 1 */
};
