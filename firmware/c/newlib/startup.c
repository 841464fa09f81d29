/* Start-up for the plain newlib firmware under firmware/c/newlib and firmware/c/matrix: firmware
 * that has never heard of mcubench (no mcubench.h), as a C team would write it for a Cortex-M4
 * part. Vector table, FPU enable, .data/.bss initialisation, then newlib: with --specs=rdimon.specs
 * (printf on semihosting) it opens the console handles first, as rdimon's own crt0 would.
 *
 * Why not rdimon's crt0 (`_start`)? It takes the stack and heap from SYS_HEAPINFO, and QEMU's
 * answer on M-profile boards is derived from the machine's nominal RAM size (16 MiB of PSRAM on
 * MPS2), not from the SRAM the firmware is linked in: the stack would land in unmapped space.
 * So the stack is the linker script's (top of RAM) and the heap runs from `end` up to the stack
 * (newlib's _sbrk). Works with firmware/c/link.ld and -L linker/<layout> for any board. */
#include <stdint.h>
#include <stdlib.h>

extern uint32_t __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[];
extern uint32_t __stack_top[];
/* A program whose main takes (argc, argv), such as a library's test program, is built with
 * -DSTARTUP_ARGV0='"name"': it is called with argc 1 and argv { name, NULL }. */
#ifdef STARTUP_ARGV0
int main(int argc, char **argv);
static char *startup_argv[] = { STARTUP_ARGV0, 0 };
#else
int main(void);
#endif
#ifdef NEWLIB_RDIMON
void initialise_monitor_handles(void);
#endif

void Default_Handler(void);

__attribute__((noreturn)) void Reset_Handler(void)
{
    for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;) *d++ = *s++;
    for (uint32_t *d = __bss_start; d < __bss_end;) *d++ = 0;
#if defined(__ARM_FP)
    /* CPACR: full access to CP10/CP11, so hard-float code does not fault (NOCP). */
    *(volatile uint32_t *)0xE000ED88 |= 0xFu << 20;
    __asm__ volatile("dsb\n isb" ::: "memory");
#endif
#ifdef NEWLIB_RDIMON
    initialise_monitor_handles();
#endif
#ifdef STARTUP_ARGV0
    exit(main(1, startup_argv));
#else
    exit(main());
#endif
}

/* Faults stop here; the runner sees a hang (its timeout) or, under a debugger, where it stopped. */
__attribute__((noreturn)) void Default_Handler(void)
{
    for (;;) {}
}

/* As vendors' start-up files have it: a program may define its own HardFault_Handler. */
__attribute__((noreturn, weak, alias("Default_Handler"))) void HardFault_Handler(void);

typedef void (*vector)(void);

__attribute__((section(".vector_table"), used)) const vector vector_table[16] = {
    (vector)__stack_top, /* initial SP */
    Reset_Handler,
    Default_Handler, /* NMI */
    HardFault_Handler,
    Default_Handler, /* MemManage */
    Default_Handler, /* BusFault */
    Default_Handler, /* UsageFault */
    0, 0, 0, 0,
    Default_Handler, /* SVCall */
    Default_Handler, /* DebugMonitor */
    0,
    Default_Handler, /* PendSV */
    Default_Handler, /* SysTick */
};
