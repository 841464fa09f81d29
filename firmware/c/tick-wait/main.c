/* A delay on a timer interrupt's tick, as STM32 HAL firmware with TIM6 as its time base has it
 * (HAL_Delay polls HAL_GetTick, which reads the tick the TIM6 interrupt counts): TIM6 runs at
 * 1 kHz, its update interrupt increments `ticks`, and `delay_ms` waits for it. On the part the
 * delay ends after 10 ms; QEMU's netduinoplus2 has no TIM6 (QEMU 7.2 and 10 leave it out), so the
 * interrupt never comes and the delay never ends: mcubench's timeout names the variable the wait
 * reads (through `get_tick`) and says what may set it; with -DSLEEP the delay sleeps in WFI
 * between ticks, and the core sleeps for ever. Own vector table (TIM6_DAC is IRQ 54),
 * printf on USART1 (firmware/c/newlib/uart.c); built for netduinoplus2 by firmware/c/build.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define REG(addr) (*(volatile uint32_t *)(addr))
#define RCC_APB1ENR REG(0x40023840u)
#define TIM6_CR1 REG(0x40001000u)
#define TIM6_DIER REG(0x4000100Cu)
#define TIM6_SR REG(0x40001010u)
#define TIM6_PSC REG(0x40001028u)
#define TIM6_ARR REG(0x4000102Cu)
#define NVIC_ISER1 REG(0xE000E104u)
#define TIM6_DAC_IRQn 54

static volatile uint32_t ticks;

void TIM6_DAC_IRQHandler(void)
{
    TIM6_SR = 0;
    ticks++;
}

/* Not inlined, as HAL_GetTick is a function of its own in the HAL. */
__attribute__((noinline)) static uint32_t get_tick(void) { return ticks; }

static void delay_ms(uint32_t ms)
{
    uint32_t start = get_tick();
    while (get_tick() - start < ms) {
#ifdef SLEEP
        __asm__ volatile("wfi"); /* sleep until the next interrupt, as low-power delays do */
#endif
    }
}

static void timebase_init(void)
{
    RCC_APB1ENR |= 1u << 4; /* TIM6EN */
    TIM6_PSC = 16u - 1u;    /* 16 MHz HSI → 1 MHz */
    TIM6_ARR = 1000u - 1u;  /* → 1 kHz */
    TIM6_DIER = 1u;         /* update interrupt */
    TIM6_CR1 = 1u;          /* counter on */
    NVIC_ISER1 = 1u << (TIM6_DAC_IRQn - 32);
}

int main(void)
{
    timebase_init();
    printf("waiting 10 ms\n");
    delay_ms(10);
    printf("done\n");
    return 0;
}

extern uint32_t __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[];
extern uint32_t __stack_top[];

__attribute__((noreturn)) void Reset_Handler(void)
{
    for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;) *d++ = *s++;
    for (uint32_t *d = __bss_start; d < __bss_end;) *d++ = 0;
    exit(main());
}

__attribute__((noreturn)) void Default_Handler(void)
{
    for (;;) {}
}

typedef void (*vector)(void);

__attribute__((section(".vector_table"), used)) const vector vector_table[16 + TIM6_DAC_IRQn + 1] = {
    [0] = (vector)__stack_top,
    [1] = Reset_Handler,
    [2 ... 15] = Default_Handler,
    [16 ... 16 + TIM6_DAC_IRQn - 1] = Default_Handler,
    [16 + TIM6_DAC_IRQn] = TIM6_DAC_IRQHandler,
};
