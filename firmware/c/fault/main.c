/* A newlib program with a bug as firmware has them: it calls a function through a pointer that
 * lost its Thumb bit (an even address), which faults (UsageFault INVSTATE, escalated to HardFault
 * since the UsageFault handler is not enabled). firmware/c/newlib's start-up, like most C
 * start-up files, gives every fault a handler that loops forever, so the run does not end: it
 * prints a line first, then hangs in Default_Handler until the runner's timeout
 * (sim/mcubench/tests/any_firmware.rs). With -DPRINTING_HANDLER it has a HardFault_Handler of its
 * own, as many programs do: it prints a line (pushing registers first), then loops. */
#include <stdint.h>
#include <stdio.h>

typedef int (*handler)(int);

__attribute__((noipa)) int twice(int x)
{
    return 2 * x;
}

/* The table entry a bug cleared bit 0 of. */
__attribute__((noipa)) handler lookup(int i)
{
    uintptr_t a = (uintptr_t)&twice;
    return (handler)(i == 3 ? a & ~(uintptr_t)1 : a);
}

#ifdef PRINTING_HANDLER
void HardFault_Handler(void)
{
    printf("HardFault!\n");
    for (;;) {}
}
#endif

int main(void)
{
    printf("dispatching\n");
    int sum = 0;
    for (int i = 0; i < 4; i++) sum += lookup(i)(i);
    printf("sum %d\n", sum);
    return 0;
}
