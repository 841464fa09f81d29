/* The smallest board firmware: some work, then main returns into newlib's exit, whose libnosys
 * `_exit` is a branch to itself. Built for the Cortex-M0 (microbit) and the Cortex-M33
 * (mps2-an505, the two-core SSE-200 board) by firmware/c/build.sh, for the end of a run at that
 * loop (`verdict.exit: loop`) on every core model. */
#include <stdint.h>

volatile uint32_t acc;

int main(void)
{
    for (uint32_t i = 0; i < 1000; i++) acc += i * 3u;
    return 0;
}
