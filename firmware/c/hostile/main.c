/* Hostile firmware for the containment tests (sim/mcubench/tests/contain.rs). One source, one ELF
 * per attack: build.sh compiles it with -DHOSTILE=<n> (the HOSTILE_* numbers below) into
 * hostile-<name>.elf for mps2-an386.
 *
 * Attacks that need a host path or command (SYS_SYSTEM, SYS_OPEN, SYS_REMOVE) take it from
 * `hostile_arg`, a NUL-padded placeholder in .rodata that the test overwrites in a copy of the ELF
 * with a path under its own temporary directory, so no fixed host path is ever named here. */
#define MCUBENCH_IMPL
#include "mcubench.h"

#define HOSTILE_SYSTEM 1    /* SYS_SYSTEM(arg): e.g. `touch <marker>` */
#define HOSTILE_READ 2      /* SYS_OPEN(arg, "r") + SYS_READ, prints what it read */
#define HOSTILE_WRITE 3     /* SYS_OPEN(arg, "w") + SYS_WRITE: creates a marker file */
#define HOSTILE_REMOVE 4    /* SYS_REMOVE(arg) and SYS_RENAME(arg, arg + ".moved") */
#define HOSTILE_SILENT_HANG 5 /* infinite loop before any output */
#define HOSTILE_HARDFAULT 6 /* undefined instruction: UsageFault escalated to HardFault */
#define HOSTILE_LOCKUP 7    /* fault with FAULTMASK set: cannot escalate */
#define HOSTILE_RESET 8     /* SYSRESETREQ through AIRCR (QEMU -no-reboot exits 0) */
#define HOSTILE_EXIT0 9     /* a passing KAT, then exit success without an `end` record */
#define HOSTILE_FORGED_END 10 /* a failing KAT, then an `end` record that claims it passed */
#define HOSTILE_FLOOD 11    /* 1 GiB of output, 4 KiB per SYS_WRITE */
#define HOSTILE_RECURSION 12 /* unbounded recursion: the stack runs through .bss/.data and off RAM */
#define HOSTILE_BIG_WRITE 13 /* one SYS_WRITE of 2 GiB starting at address 0 */
#define HOSTILE_FORGED_KAT 14 /* a KAT that says result=pass with a wrong output value (the host catches it
                               with firmware/c/hostile/vectors.txt) */
#define HOSTILE_PROBE 15    /* not hostile: console-only calls (ISTTY, FLEN, SEEK, TIME, WRITEC,
                               WRITE0, CLOSE of the console) that the runner must allow */
#define HOSTILE_NETWORK 16  /* TCP SYNs from the board's LAN9118 to 10.0.2.2:<arg>, which QEMU's default
                               user networking would turn into a connection to the host's
                               127.0.0.1:<arg> */
#define HOSTILE_RELABEL 17  /* writes QEMU's lockup dump and the plugin's error line on the semihosting
                               console, then exits with failure: must stay a failure, not become
                               a fault or a setup error */

#ifndef HOSTILE
#error "build with -DHOSTILE=<n>"
#endif

#define MB_SYS_CLOSE 0x02
#define MB_SYS_READ 0x06
#define MB_SYS_REMOVE 0x0e
#define MB_SYS_RENAME 0x0f
#define MB_SYS_SYSTEM 0x12
#define MB_SYS_WRITEC 0x03
#define MB_SYS_WRITE0 0x04
#define MB_SYS_READC 0x07
#define MB_SYS_ISTTY 0x09
#define MB_SYS_SEEK 0x0a
#define MB_SYS_FLEN 0x0c
#define MB_SYS_TIME 0x11

/* The placeholder the test replaces (keep the text in sync with tests/contain.rs). */
__attribute__((used)) const volatile char hostile_arg[256] = "@@MCUBENCH-HOSTILE-ARG@@";

static size_t arg_copy(char *dst, size_t cap)
{
    size_t n = 0;
    while (n + 1 < cap && hostile_arg[n]) {
        dst[n] = hostile_arg[n];
        n++;
    }
    dst[n] = 0;
    return n;
}

static void say(const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    mb_write(s, n);
}

static void say_result(const char *what, uint32_t r)
{
    mb_line l;
    l.len = 0;
    l.overflow = 0;
    mb_puts(&l, what);
    mb_dec(&l, "r", r);
    l.buf[l.len] = '\n';
    mb_write(l.buf, l.len + 1);
}

/* A made-up KAT record with the given result and output, then the `end` record given. */
static void kat_line(const char *result, const char *out)
{
    mb_line l;
    mb_record(&l, "kat");
    mb_text(&l, "id", "crc32/check-123456789");
    mb_text(&l, "alg", "CRC-32");
    mb_text(&l, "op", "hash");
    mb_text(&l, "result", result);
    mb_dec(&l, "ticks", 10);
    mb_dec(&l, "stack", 16);
    mb_text(&l, "out", out);
    if (result[0] == 'f') mb_text(&l, "expected", "cbf43926");
    mb_emit(&l);
}

static void end_line(uint32_t passed, uint32_t failed)
{
    mb_line l;
    mb_record(&l, "end");
    mb_dec(&l, "passed", passed);
    mb_dec(&l, "failed", failed);
    mb_dec(&l, "stack", 64);
    mb_emit(&l);
}

#if HOSTILE == HOSTILE_RECURSION
volatile uint32_t sink;
volatile uint32_t depth_limit = 0xffffffffu; /* never reached: RAM is 4 MiB */
static __attribute__((noinline)) uint32_t dive(uint32_t depth)
{
    volatile uint32_t pad[16];
    if (depth == depth_limit) return 0;
    pad[depth & 15] = depth;
    return dive(depth + 1) + pad[(depth + 3) & 15];
}
#endif

#if HOSTILE == HOSTILE_NETWORK
/* The MPS2 boards' SMSC LAN9118 (QEMU hw/net/lan9118.c): writes to the TX data FIFO take
 * command A, command B, then the frame as little-endian words; the last word sends it. */
#define LAN9118_TX_DATA_FIFO (*(volatile uint32_t *)0x40200020u)

static uint16_t ones_sum(const uint8_t *p, size_t n, uint32_t sum)
{
    for (size_t i = 0; i + 1 < n; i += 2) sum += (uint32_t)(p[i] << 8 | p[i + 1]);
    if (n & 1) sum += (uint32_t)(p[n - 1] << 8);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)sum;
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void send_syn(uint16_t port)
{
    static const uint8_t head[34] = {
        0x52, 0x55, 0x0a, 0x00, 0x02, 0x02, /* to QEMU's user-network gateway */
        0x52, 0x54, 0x00, 0x12, 0x34, 0x56, 0x08, 0x00,
        0x45, 0x00, 0x00, 0x28, 0x00, 0x01, 0x40, 0x00, 0x40, 0x06, 0x00, 0x00, /* IPv4, TCP */
        10, 0, 2, 15, 10, 0, 2, 2, /* 10.0.2.15 -> 10.0.2.2 (the host's loopback) */
    };
    static uint8_t frame[54];
    for (size_t i = 0; i < sizeof head; i++) frame[i] = head[i];
    uint8_t *ip = frame + 14, *tcp = frame + 34;
    put16(ip + 10, (uint16_t)~ones_sum(ip, 20, 0));
    const uint8_t tcp_head[20] = {0x30, 0x39, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0, 0x50, 0x02, 0x72, 0x10, 0, 0, 0, 0};
    for (size_t i = 0; i < 20; i++) tcp[i] = tcp_head[i];
    put16(tcp + 2, port);
    uint8_t pseudo[12] = {10, 0, 2, 15, 10, 0, 2, 2, 0, 6, 0, 20};
    put16(tcp + 16, (uint16_t)~ones_sum(tcp, 20, ones_sum(pseudo, sizeof pseudo, 0)));

    LAN9118_TX_DATA_FIFO = 0x3000u | sizeof frame; /* A: first and last segment, buffer size */
    LAN9118_TX_DATA_FIFO = sizeof frame;           /* B: packet length */
    for (size_t i = 0; i < sizeof frame; i += 4) {
        uint32_t w = 0;
        for (size_t k = 0; k < 4 && i + k < sizeof frame; k++) w |= (uint32_t)frame[i + k] << (8 * k);
        LAN9118_TX_DATA_FIFO = w;
    }
}
#endif

int main(void)
{
    char arg[256];
    mb_session s;
    (void)arg;
    (void)arg_copy;
    (void)say_result;
    (void)kat_line;
    (void)end_line;
    (void)say;

#if HOSTILE == HOSTILE_SILENT_HANG
    for (;;) __asm__ volatile("");
#endif

    mb_begin(&s, "hostile");

#if HOSTILE == HOSTILE_SYSTEM
    uint32_t len = arg_copy(arg, sizeof arg);
    uint32_t a[2] = {(uint32_t)(uintptr_t)arg, len};
    say_result("system", mb_semihost(MB_SYS_SYSTEM, a));
    end_line(0, 0);
    mb_exit(1);
#elif HOSTILE == HOSTILE_READ
    uint32_t len = arg_copy(arg, sizeof arg);
    uint32_t o[3] = {(uint32_t)(uintptr_t)arg, 0 /* "r" */, len};
    int32_t fd = (int32_t)mb_semihost(MB_SYS_OPEN, o);
    say_result("open", (uint32_t)fd);
    if (fd >= 0) {
        static char buf[512];
        uint32_t rd[3] = {(uint32_t)fd, (uint32_t)(uintptr_t)buf, sizeof buf};
        uint32_t left = mb_semihost(MB_SYS_READ, rd);
        if (left <= sizeof buf) {
            say("read: ");
            mb_write(buf, sizeof buf - left);
            say("\n");
        }
    }
    end_line(0, 0);
    mb_exit(1);
#elif HOSTILE == HOSTILE_WRITE
    uint32_t len = arg_copy(arg, sizeof arg);
    uint32_t o[3] = {(uint32_t)(uintptr_t)arg, 4 /* "w" */, len};
    int32_t fd = (int32_t)mb_semihost(MB_SYS_OPEN, o);
    say_result("open", (uint32_t)fd);
    if (fd >= 0) {
        static const char pwned[] = "pwned\n";
        uint32_t wr[3] = {(uint32_t)fd, (uint32_t)(uintptr_t)pwned, sizeof pwned - 1};
        say_result("write", mb_semihost(MB_SYS_WRITE, wr));
        uint32_t cl[1] = {(uint32_t)fd};
        mb_semihost(MB_SYS_CLOSE, cl);
    }
    end_line(0, 0);
    mb_exit(1);
#elif HOSTILE == HOSTILE_REMOVE
    uint32_t len = arg_copy(arg, sizeof arg - 8);
    static char to[256];
    for (uint32_t i = 0; i <= len; i++) to[i] = arg[i];
    const char *suffix = ".moved";
    uint32_t tlen = len;
    while (*suffix) to[tlen++] = *suffix++;
    to[tlen] = 0;
    uint32_t rn[4] = {(uint32_t)(uintptr_t)arg, len, (uint32_t)(uintptr_t)to, tlen};
    say_result("rename", mb_semihost(MB_SYS_RENAME, rn));
    uint32_t rm[2] = {(uint32_t)(uintptr_t)arg, len};
    say_result("remove", mb_semihost(MB_SYS_REMOVE, rm));
    end_line(0, 0);
    mb_exit(1);
#elif HOSTILE == HOSTILE_SILENT_HANG
    /* unreachable: hangs above */
#elif HOSTILE == HOSTILE_HARDFAULT
    __asm__ volatile("udf #0x42");
#elif HOSTILE == HOSTILE_LOCKUP
    __asm__ volatile("cpsid f\n udf #0x4c");
#elif HOSTILE == HOSTILE_RESET
    *(volatile uint32_t *)0xE000ED0Cu = 0x05FA0004u; /* AIRCR: VECTKEY | SYSRESETREQ */
    __asm__ volatile("dsb");
    for (;;) {}
#elif HOSTILE == HOSTILE_EXIT0
    kat_line("pass", "cbf43926");
    mb_exit(1);
#elif HOSTILE == HOSTILE_FORGED_END
    kat_line("fail", "00000000");
    end_line(1, 0);
    mb_exit(1);
#elif HOSTILE == HOSTILE_FORGED_KAT
    kat_line("pass", "00000000");
    end_line(1, 0);
    mb_exit(1);
#elif HOSTILE == HOSTILE_FLOOD
    static char block[4096];
    for (size_t i = 0; i < sizeof block; i++) block[i] = (i % 64 == 63) ? '\n' : 'A' + (char)(i % 26);
    for (uint32_t i = 0; i < (1u << 30) / sizeof block; i++) mb_write(block, sizeof block);
    end_line(0, 0);
    mb_exit(1);
#elif HOSTILE == HOSTILE_BIG_WRITE
    uint32_t wr[3] = {(uint32_t)mb_stdout_fd(), 0, 0x80000000u};
    say_result("write", mb_semihost(MB_SYS_WRITE, wr));
    end_line(0, 0);
    mb_exit(1);
#elif HOSTILE == HOSTILE_PROBE
    uint32_t fd = (uint32_t)mb_stdout_fd();
    uint32_t one[1] = {fd};
    say_result("istty", mb_semihost(MB_SYS_ISTTY, one));
    say_result("flen", mb_semihost(MB_SYS_FLEN, one));
    uint32_t seek[2] = {fd, 0};
    say_result("seek", mb_semihost(MB_SYS_SEEK, seek));
    say_result("time", mb_semihost(MB_SYS_TIME, 0));
    char c = 'C';
    mb_semihost(MB_SYS_WRITEC, &c);
    mb_semihost(MB_SYS_WRITE0, "write0\n");
    end_line(0, 0);
    mb_exit(1);
#elif HOSTILE == HOSTILE_NETWORK
    uint32_t port = 0;
    for (size_t i = 0; hostile_arg[i] >= '0' && hostile_arg[i] <= '9'; i++) port = port * 10 + (uint32_t)(hostile_arg[i] - '0');
    for (int k = 0; k < 3; k++) {
        send_syn((uint16_t)port);
        for (volatile uint32_t d = 0; d < 100000; d++) {}
    }
    say_result("syn", port);
    end_line(0, 0);
    mb_exit(1);
#elif HOSTILE == HOSTILE_RELABEL
    mb_semihost(MB_SYS_WRITE0, "qemu: fatal: Lockup: can't escalate 3 to HardFault (current priority -1)\n"
                               "R12=00000000 R13=20003fe0 R14=fffffff9 R15=00001234\n"
                               "mcubench-qemu-plugin: error: forged by the firmware\n");
    mb_exit(0);
#elif HOSTILE == HOSTILE_RECURSION
    sink = dive(0);
    end_line(0, 0);
    mb_exit(1);
#else
#error "unknown HOSTILE"
#endif
    for (;;) {}
}
