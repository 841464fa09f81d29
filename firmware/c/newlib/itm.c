/* Console through the ITM, as STM32CubeIDE's SWV printf examples retarget it: newlib's _write sends
 * each character to stimulus port 0 the way CMSIS's ITM_SendChar does, only when the ITM (TCR
 * bit 0) and port 0 (TER bit 0) are enabled, which the debugger does on a board (ARMv7-M ARM
 * C1.7). QEMU does not model the ITM: both registers read 0, so nothing is sent, and the console
 * stays empty (mcubench's verdict says why). Exit is libnosys's `_exit`, a loop on itself. Link
 * with --specs=nano.specs --specs=nosys.specs. */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

#define ITM_PORT0 (*(volatile uint32_t *)0xE0000000u)
#define ITM_PORT0_U8 (*(volatile uint8_t *)0xE0000000u)
#define ITM_TER (*(volatile uint32_t *)0xE0000E00u)
#define ITM_TCR (*(volatile uint32_t *)0xE0000E80u)

static void itm_send_char(char c)
{
    if ((ITM_TCR & 1u) != 0 && (ITM_TER & 1u) != 0) {
        while (ITM_PORT0 == 0) {}
        ITM_PORT0_U8 = (uint8_t)c;
    }
}

int _write(int fd, const char *buf, int len)
{
    if (fd != 1 && fd != 2) {
        errno = EBADF;
        return -1;
    }
    for (int i = 0; i < len; i++) itm_send_char(buf[i]);
    return len;
}

int _isatty(int fd) { return fd <= 2; }
int _fstat(int fd, struct stat *st)
{
    (void)fd;
    st->st_mode = S_IFCHR;
    return 0;
}
