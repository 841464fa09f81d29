/* An STM32F4 start-up as vendor code writes it: switch the system clock to the external crystal
 * (RCC_CR.HSEON, then wait for RCC_CR.HSERDY, RM0090 §7.3.1) before doing anything else, with
 * printf on USART1. On the part the crystal is ready within milliseconds; QEMU's netduinoplus2
 * never sets HSERDY (QEMU 7.2 leaves the RCC out: it reads 0; QEMU 10 models its registers, not
 * the oscillator), so the wait never ends: mcubench's timeout names the register the loop reads
 * and what QEMU's model has there. Built for netduinoplus2 (firmware/c/build.sh). */
#include <stdint.h>
#include <stdio.h>

#define RCC_CR (*(volatile uint32_t *)0x40023800u)
#define RCC_CR_HSEON (1u << 16)
#define RCC_CR_HSERDY (1u << 17)

static void clock_to_hse(void)
{
    RCC_CR |= RCC_CR_HSEON;
    while (!(RCC_CR & RCC_CR_HSERDY)) {}
}

int main(void)
{
    printf("switching to the crystal\n");
    clock_to_hse();
    printf("running on the crystal\n");
    return 0;
}
