/* Starts the second Cortex-M33 of an SSE-200 (mps2-an521), then exits 0 through semihosting: the
 * run the timing plugin must refuse, since its counters cannot tell the cores apart. CPU 1 starts
 * powered off; clearing its bit in the SSE-200 system control block's CPUWAIT register
 * (0x50021118, Secure) powers it on, and it boots from INITSVTOR1, which is this image's vector
 * table too, and spins in the CPU-1 branch of Reset_Handler. Built by sim/mcubench/tests/boards.rs
 * with firmware/c/link.ld and linker/mps2-an505 (the Secure aliases). */
#include <stdint.h>

#define CPUWAIT (*(volatile uint32_t *)0x50021118u)
#define CPUID (*(volatile uint32_t *)0x4001f000u) /* SSE-200 CPU_IDENTITY: 0 or 1 */

extern uint32_t __stack_top[];

static void sys_exit(uint32_t reason)
{
    register uint32_t r0 __asm__("r0") = 0x18;
    register uint32_t r1 __asm__("r1") = reason;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
}

__attribute__((noreturn)) void Reset_Handler(void)
{
    if (CPUID != 0) {
        for (volatile uint32_t n = 0;; n++) {} /* CPU 1: run code, forever */
    }
    CPUWAIT = 0; /* release CPU 1 */
    for (volatile uint32_t n = 0; n < 100000; n++) {}
    sys_exit(0x20026); /* ADP_Stopped_ApplicationExit: QEMU exits 0 */
    for (;;) {}
}

void Default_Handler(void)
{
    sys_exit(0x20023); /* QEMU exits 1 */
    for (;;) {}
}

__attribute__((section(".vector_table"), used)) const void *const vector_table[16] = {
    __stack_top, Reset_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler,
};
