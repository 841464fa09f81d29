/* Console on the board's UART instead of semihosting: newlib's _write retargeted to a polled UART
 * (what most firmware does), or to the ITM, and exit through semihosting SYS_EXIT so that the run
 * ends. With
 * -DEXIT_NOSYS, exit is libnosys's `_exit`, a branch to itself, as on a board (mcubench's
 * `verdict.exit: loop` ends the run there); with -DEXIT_RESET, a system reset (`exit: reset`).
 * Link with --specs=nano.specs --specs=nosys.specs.
 *
 * One of, at compile time:
 *   -DUART_CMSDK=0x40004000  Arm CMSDK APB UART (MPS2 boards: UART0 at 0x40004000)
 *   -DUART_STM32=0x40011000  STM32F2/F4 USART (netduinoplus2: USART1 at 0x40011000)
 *   -DCONSOLE_ITM            the ITM's stimulus port 0, as STM32CubeIDE's SWV printf examples
 *                            retarget it (QEMU does not model the ITM: nothing is sent)
 * QEMU connects UART n of both machines to its n-th serial port (-serial ..., serial0 first). */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

#define REG(base, off) (*(volatile uint32_t *)((base) + (off)))

#if defined(UART_CMSDK)
/* CMSDK APB UART (Arm DDI0479C): DATA 0x00, STATE 0x04 (bit 0 TX buffer full), CTRL 0x08 (bit 0
 * TX enable), BAUDDIV 0x10 (>= 16). */
static void uart_init(void)
{
    REG(UART_CMSDK, 0x10) = 25000000u / 115200u; /* 25 MHz APB clock, 115200 baud */
    REG(UART_CMSDK, 0x08) = 1u;                  /* TX enable */
}
static void uart_putc(char c)
{
    while (REG(UART_CMSDK, 0x04) & 1u) {} /* TX buffer full */
    REG(UART_CMSDK, 0x00) = (uint8_t)c;
}
#elif defined(UART_STM32)
/* STM32F4 USART (RM0090 §30.6): SR 0x00 (bit 7 TXE), DR 0x04, BRR 0x08, CR1 0x0C (bit 13 UE,
 * bit 3 TE). A real part also needs the RCC clock enable and the GPIO alternate function; QEMU
 * models neither (writes to RCC/GPIO are ignored), so they are left out. */
static void uart_init(void)
{
    REG(UART_STM32, 0x08) = 0x8Bu;                   /* 115200 baud at 16 MHz HSI */
    REG(UART_STM32, 0x0C) = (1u << 13) | (1u << 3); /* UE | TE */
}
static void uart_putc(char c)
{
    while (!(REG(UART_STM32, 0x00) & (1u << 7))) {} /* TXE */
    REG(UART_STM32, 0x04) = (uint8_t)c;
}
#elif defined(CONSOLE_ITM)
/* ITM (ARMv7-M ARM C1.7): stimulus port 0 at 0xE0000000, TER 0xE0000E00, TCR 0xE0000E80. As
 * CMSIS's ITM_SendChar: a character goes out only when the ITM (TCR bit 0) and port 0 (TER bit
 * 0) are enabled, which the debugger does on a board; under QEMU both read 0. */
static void uart_init(void) {}
static void uart_putc(char c)
{
    if ((REG(0xE0000000u, 0xE80) & 1u) != 0 && (REG(0xE0000000u, 0xE00) & 1u) != 0) {
        while (REG(0xE0000000u, 0) == 0) {}
        *(volatile uint8_t *)0xE0000000u = (uint8_t)c;
    }
}
#else
#error "build with -DUART_CMSDK=<base>, -DUART_STM32=<base> or -DCONSOLE_ITM"
#endif

static int uart_ready;

int _write(int fd, const char *buf, int len)
{
    if (fd != 1 && fd != 2) {
        errno = EBADF;
        return -1;
    }
    if (!uart_ready) {
        uart_init();
        uart_ready = 1;
    }
    for (int i = 0; i < len; i++) {
        if (buf[i] == '\n') uart_putc('\r');
        uart_putc(buf[i]);
    }
    return len;
}

int _isatty(int fd) { return fd <= 2; }
int _fstat(int fd, struct stat *st)
{
    (void)fd;
    st->st_mode = S_IFCHR;
    return 0;
}

#if defined(EXIT_RESET)
/* A system reset instead of an exit, as a bootloader ends after an update: AIRCR (0xE000ED0C) with
 * its key 0x05FA and SYSRESETREQ (bit 2), as CMSIS's NVIC_SystemReset() writes it (ARMv7-M ARM
 * B3.2.6). QEMU runs mcubench's firmware with -no-reboot, so the reset ends the run. */
__attribute__((noreturn)) void _exit(int status)
{
    (void)status;
    __asm__ volatile("dsb" ::: "memory");
    *(volatile uint32_t *)0xE000ED0Cu = (0x05FAu << 16) | (1u << 2);
    __asm__ volatile("dsb" ::: "memory");
    for (;;) {}
}
#elif !defined(EXIT_NOSYS)
/* Semihosting SYS_EXIT (0x18) with the AArch32 reason code: ADP_Stopped_ApplicationExit (0x20026)
 * for success, ADP_Stopped_RunTimeErrorUnknown (0x20023) otherwise. QEMU exits 0 or 1. */
__attribute__((noreturn)) void _exit(int status)
{
    register uint32_t r0 __asm__("r0") = 0x18;
    register uint32_t r1 __asm__("r1") = status == 0 ? 0x20026u : 0x20023u;
    __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
    for (;;) {}
}
#endif /* EXIT_NOSYS: newlib's libnosys `_exit`, a loop on itself, ends the program, as on a board */
