/* The smallest board firmware: some work, then main returns into newlib's exit, whose libnosys
 * `_exit` is a branch to itself. Built for the Cortex-M0 (microbit) and the Cortex-M33
 * (mps2-an505, the two-core SSE-200 board) by firmware/c/build.sh, for the end of a run at that
 * loop (`verdict.exit: loop`) on every core model. -DIDLE_WFI ends in an idle loop instead,
 * `while (1) { __WFI(); }`, where QEMU's core sleeps for good (no interrupt is enabled); with
 * -DIDLE_DSB too, `while (1) { __DSB(); __WFI(); }`. */
#include <stdint.h>

volatile uint32_t acc;

int main(void)
{
    for (uint32_t i = 0; i < 1000; i++) acc += i * 3u;
#if defined(IDLE_WFI) && defined(IDLE_DSB)
    /* CMSIS's __DSB(); __WFI(): memory accesses done before the core sleeps. */
    for (;;) __asm__ volatile("dsb 0xf\n\twfi" ::: "memory");
#elif defined(IDLE_WFI)
    for (;;) __asm__ volatile("wfi");
#endif
    return 0;
}
