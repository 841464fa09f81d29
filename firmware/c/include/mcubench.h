/*
 * mcubench result protocol (docs/src/reference/protocol.md, version 1) for C firmware built with
 * arm-none-eabi-gcc: ARM semihosting through `bkpt 0xab`, one semihosting write per record,
 * SysTick tick counting with 64-bit wrap extension, stack painting, a HardFault handler that
 * writes the `fault` record, and SYS_EXIT.
 *
 * Use: include this header everywhere; in exactly one C file, `#define MCUBENCH_IMPL` before
 * including it to get the exception handlers (HardFault_Handler, SysTick_Handler,
 * Default_Handler) that the startup's vector table points at. The linker script must define
 * __stack_bottom (lowest stack address, end of .bss) and __stack_top (initial SP), and the
 * reset handler must paint [__stack_bottom, __stack_top) with MB_PAINT before using the stack.
 *
 * Heap (opt-in): `#define MCUBENCH_HEAP` before every inclusion (or -DMCUBENCH_HEAP) and the
 * MCUBENCH_IMPL file also defines `_sbrk`, through which newlib's malloc grows its heap. The heap
 * grows up from __stack_bottom (the end of .bss) towards the stack, and _sbrk refuses (errno
 * ENOMEM, (void *)-1) to come closer than MB_HEAP_STACK_RESERVE bytes to __stack_top. mb_measure
 * then reports the heap an operation took (`heap=` on `kat`) and mb_end the whole-run peak
 * (`heap=` on `end`), both only once the firmware has called _sbrk. The numbers are of the break,
 * so they include malloc's chunk headers, alignment and fragmentation: the RAM actually taken.
 * Opt-in because it changes the code of mb_measure, mb_kat and mb_end, whose frames and counts
 * the reports of existing firmware (and the stack analyzer's tests) depend on.
 *
 * Region markers (on by default): mb_measure runs each operation between
 * mcubench_region_enter(id) and mcubench_region_exit(id), ids 0, 1, 2, ... in call order, and
 * mb_kat writes the id as `region=`, so the host takes each KAT's instruction count exactly (and
 * its cycle estimate) from its QEMU plugin instead of from SysTick ticks, as for Rust firmware.
 * The markers are defined in the MCUBENCH_IMPL file with external linkage and
 * noipa/noinline/used (see "region markers" below), so no optimisation level, file layout or
 * -flto can inline, clone (.constprop/.isra) or rename them. `#define MCUBENCH_NO_REGIONS`
 * before every inclusion (or -DMCUBENCH_NO_REGIONS) builds firmware without any marker, whose
 * KAT counts then come from ticks (as for a third-party ELF).
 *
 * Start-up: on a core with an FPU, enable it (CPACR CP10/CP11 full access, then DSB/ISB) before
 * the first floating-point instruction, as firmware/c/kat-crc32/startup.c does when built with
 * __ARM_FP; otherwise that instruction faults with UsageFault NOCP (escalated to HardFault).
 *
 * Bytes (opt-in, for cycles per byte): `#define MCUBENCH_BYTES` (or -DMCUBENCH_BYTES) gives
 * mb_measurement a `bytes` field, 0 after mb_measure; set it to the message bytes the operation
 * processed before mb_kat, which then writes `bytes=` (0 writes nothing). Opt-in for the same
 * reason as the heap.
 */
#ifndef MCUBENCH_H
#define MCUBENCH_H

#include <stddef.h>
#include <stdint.h>

#define MB_PREFIX "@mcubench/1 "
#define MB_LINE_CAP 1024
#define MB_PAINT 0xccccccccu
#define MB_WINDOW (32u * 1024u)

/* ---- semihosting ------------------------------------------------------------------------ */

#define MB_SYS_OPEN 0x01
#define MB_SYS_WRITE 0x05
#define MB_SYS_EXIT 0x18
#define MB_ADP_STOPPED_APPLICATION_EXIT 0x20026
#define MB_ADP_STOPPED_RUNTIME_ERROR_UNKNOWN 0x20023

static inline uint32_t mb_semihost(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static inline int32_t mb_stdout_fd(void)
{
    static int32_t fd = -1;
    if (fd < 0) {
        /* SYS_OPEN(":tt", mode 4 = "w", length 3) */
        uint32_t args[3] = {(uint32_t)(uintptr_t)":tt", 4, 3};
        fd = (int32_t)mb_semihost(MB_SYS_OPEN, args);
    }
    return fd;
}

/* One SYS_WRITE of the whole buffer (continued only if the host reports a partial write). */
static inline void mb_write(const char *buf, size_t len)
{
    int32_t fd = mb_stdout_fd();
    if (fd < 0) return;
    while (len > 0) {
        uint32_t args[3] = {(uint32_t)fd, (uint32_t)(uintptr_t)buf, (uint32_t)len};
        uint32_t left = mb_semihost(MB_SYS_WRITE, args);
        if (left == 0 || left >= len) return;
        buf += len - left;
        len = left;
    }
}

static inline __attribute__((noreturn)) void mb_exit(int success)
{
    /* 32-bit ARM: the reason code is passed directly in r1. QEMU exits 0 / 1. */
    mb_semihost(MB_SYS_EXIT, (const void *)(uintptr_t)(success ? MB_ADP_STOPPED_APPLICATION_EXIT
                                                               : MB_ADP_STOPPED_RUNTIME_ERROR_UNKNOWN));
    for (;;) {}
}

/* ---- record lines ----------------------------------------------------------------------- */

typedef struct {
    char buf[MB_LINE_CAP];
    size_t len;
    int overflow;
} mb_line;

static inline void mb_putc(mb_line *l, char c)
{
    if (l->len + 1 < MB_LINE_CAP) l->buf[l->len++] = (c == '\n' || c == '\r') ? ' ' : c;
    else l->overflow = 1;
}

static inline void mb_puts(mb_line *l, const char *s)
{
    while (*s) mb_putc(l, *s++);
}

static inline void mb_record(mb_line *l, const char *kind)
{
    l->len = 0;
    l->overflow = 0;
    mb_puts(l, MB_PREFIX);
    mb_puts(l, kind);
}

static inline void mb_key(mb_line *l, const char *key)
{
    mb_putc(l, ' ');
    mb_puts(l, key);
    mb_putc(l, '=');
}

static inline void mb_text(mb_line *l, const char *key, const char *v)
{
    mb_key(l, key);
    mb_puts(l, v);
}

static inline void mb_dec(mb_line *l, const char *key, uint64_t v)
{
    char d[20];
    int n = 0;
    mb_key(l, key);
    do { d[n++] = (char)('0' + (int)(v % 10)); v /= 10; } while (v);
    while (n) mb_putc(l, d[--n]);
}

static inline void mb_addr(mb_line *l, const char *key, uint32_t v)
{
    mb_key(l, key);
    mb_puts(l, "0x");
    for (int i = 7; i >= 0; i--) mb_putc(l, "0123456789abcdef"[(v >> (4 * i)) & 0xf]);
}

static inline void mb_hex(mb_line *l, const char *key, const uint8_t *p, size_t n)
{
    mb_key(l, key);
    for (size_t i = 0; i < n; i++) {
        mb_putc(l, "0123456789abcdef"[p[i] >> 4]);
        mb_putc(l, "0123456789abcdef"[p[i] & 0xf]);
    }
}

/* Writes the line with one semihosting write. A record that did not fit is replaced by a
 * `panic` record and the firmware exits with failure. */
static inline void mb_emit(mb_line *l)
{
    if (l->overflow) {
        static const char msg[] = MB_PREFIX "panic msg=record longer than MB_LINE_CAP; not written\n";
        mb_write(msg, sizeof msg - 1);
        mb_exit(0);
    }
    l->buf[l->len] = '\n';
    mb_write(l->buf, l->len + 1);
}

/* ---- SysTick ticks ---------------------------------------------------------------------- */

#define MB_SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define MB_SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define MB_SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define MB_SCB_ICSR (*(volatile uint32_t *)0xE000ED04u)
#define MB_ICSR_PENDSTSET (1u << 26)

extern volatile uint32_t mb_systick_wraps;

/* Processor clock, reload 0xFFFFFF, SysTick exception counting wraps. */
static inline void mb_timer_init(void)
{
    MB_SYST_CSR = 0;
    MB_SYST_RVR = 0x00ffffffu;
    MB_SYST_CVR = 0;
    mb_systick_wraps = 0;
    MB_SYST_CSR = 7; /* ENABLE | TICKINT | CLKSOURCE */
}

/* Wrap-safe 64-bit tick count (see support crate: same algorithm). */
static inline __attribute__((always_inline)) uint64_t mb_ticks(void)
{
    for (;;) {
        uint32_t w1 = mb_systick_wraps;
        uint32_t p1 = MB_SCB_ICSR & MB_ICSR_PENDSTSET;
        uint32_t cvr = MB_SYST_CVR & 0x00ffffffu;
        uint32_t p2 = MB_SCB_ICSR & MB_ICSR_PENDSTSET;
        uint32_t w2 = mb_systick_wraps;
        if (w1 == w2 && p1 == p2)
            return (((uint64_t)w1 + (p1 ? 1 : 0)) << 24) | (uint64_t)(0x00ffffffu - cvr);
    }
}

/* ---- stack ------------------------------------------------------------------------------ */

extern uint32_t __stack_bottom[], __stack_top[];
extern uintptr_t mb_low_water;

static inline __attribute__((always_inline)) uintptr_t mb_first_dirty(uintptr_t lo, uintptr_t hi)
{
    for (uintptr_t a = lo; a < hi; a += 4)
        if (*(volatile uint32_t *)a != MB_PAINT) return a;
    return hi;
}

/* ---- heap (MCUBENCH_HEAP) ---------------------------------------------------------------- */

#ifdef MCUBENCH_HEAP
/* Bytes between the highest heap break _sbrk allows and the initial SP: the stack's share when
 * the two grow towards each other. 64 KiB leaves room for mb_measure's 32 KiB painted window. */
#ifndef MB_HEAP_STACK_RESERVE
#define MB_HEAP_STACK_RESERVE (64u * 1024u)
#endif

/* Current break (0 until the first _sbrk call: heap unused), the highest break of the run and
 * the highest break since mb_measure started the current operation. */
extern uintptr_t mb_heap_brk, mb_heap_peak, mb_heap_op_peak;

static inline uintptr_t mb_heap_base(void)
{
    return ((uintptr_t)__stack_bottom + 7) & ~(uintptr_t)7;
}

/* The highest break _sbrk allows; the base itself when RAM is smaller than the reserve. */
static inline uintptr_t mb_heap_limit(void)
{
    uintptr_t top = (uintptr_t)__stack_top & ~(uintptr_t)7, base = mb_heap_base();
    return top - base > MB_HEAP_STACK_RESERVE ? top - MB_HEAP_STACK_RESERVE : base;
}

/* Where the stack's painted memory starts: above every byte the heap has ever taken. */
static inline __attribute__((always_inline)) uintptr_t mb_stack_floor(void)
{
    uintptr_t bottom = ((uintptr_t)__stack_bottom + 3) & ~(uintptr_t)3;
    uintptr_t heap = (mb_heap_peak + 3) & ~(uintptr_t)3;
    return heap > bottom ? heap : bottom;
}
#define MB_STACK_FLOOR() mb_stack_floor()
#else
/* A macro, not a function: firmware built with -fno-inline keeps exactly its former code. */
#define MB_STACK_FLOOR() ((uintptr_t)__stack_bottom)
#endif

/* Whole-run high-water mark, bytes below the initial SP. */
static inline uint32_t mb_whole_run_stack(void)
{
    uintptr_t top = (uintptr_t)__stack_top & ~(uintptr_t)7;
    uintptr_t low = mb_first_dirty(MB_STACK_FLOOR(), top);
    if (mb_low_water < low) low = mb_low_water;
    return (uint32_t)(top - low);
}

/* ---- region markers (docs/src/reference/protocol.md, "Region markers") ----------------- */

/* One word per region id; mcubench_region_enter(id) stores 1 and mcubench_region_exit(id)
 * stores 0 (different values, so the compiler never merges the two functions), each with one
 * volatile store and nothing else touching the array; ids >= MB_REGION_COUNT store nothing.
 * The host's QEMU plugin finds both functions and the array by symbol name and counts the
 * instructions (and estimates the cycles) between the two stores. Unreferenced, they are
 * removed by --gc-sections, so firmware that never marks a region has no markers.
 *
 * The plugin watches the stores of the functions with exactly these names, so the compiler must
 * keep them as they are, wherever they are defined relative to their callers:
 *  - noipa (GCC >= 8): callers are optimised as if the body were unknown and the body as if the
 *    callers were unknown: no inlining, no cloning (`mcubench_region_enter.constprop.0`, which
 *    -O3 makes from calls with a constant id when the definition is in the same file or -flto
 *    puts it there, and whose stores the plugin would never see), no identical-code folding,
 *    and no IPA knowledge of what the call does not touch (so no memory access of the measured
 *    code moves across a marker call);
 *  - used: the symbol counts as referenced from outside, so -flto keeps it external under its
 *    own name (not localised, not renamed `.lto_priv.N`); --gc-sections may still drop it
 *    (GCC's `used` sets no SHF_GNU_RETAIN);
 *  - noinline: for compilers without noipa (clang, which clones no external function).
 * The attributes are on the declarations too, so every caller in any translation unit sees them. */
#define MB_REGION_COUNT 256u
#define MB_NO_REGION UINT32_MAX
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ < 8)
#define MB_MARKER __attribute__((noinline, used))
#else
#define MB_MARKER __attribute__((noipa, noinline, used))
#endif
extern volatile uint32_t MCUBENCH_REGIONS[MB_REGION_COUNT];
MB_MARKER void mcubench_region_enter(uint32_t id);
MB_MARKER void mcubench_region_exit(uint32_t id);
#ifndef MCUBENCH_NO_REGIONS
/* The id mb_measure uses next (one counter for the whole program, in the MCUBENCH_IMPL file). */
extern uint32_t mb_next_region;
#endif

typedef struct {
    uint64_t ticks;
    uint32_t stack;
#ifdef MCUBENCH_HEAP
    /* Highest break during the operation minus the break at its start; reported (heap_used)
     * only once the firmware has called _sbrk. */
    uint32_t heap;
    int heap_used;
#endif
#ifndef MCUBENCH_NO_REGIONS
    /* The region id the operation ran in (written as `region=`), MB_NO_REGION once all
     * MB_REGION_COUNT ids are used (the host then falls back to the ticks). */
    uint32_t region;
#endif
#ifdef MCUBENCH_BYTES
    uint32_t bytes; /* message bytes the operation processed: `bytes=` when not 0 */
#endif
} mb_measurement;

/* Runs op(ctx) between two tick reads, with the window below the caller's SP painted first
 * (registers-only loop, interrupts masked, only below its own SP) and scanned afterwards.
 * Between the tick reads, op runs inside region markers with the next region id (0, 1, 2, ...
 * in call order; none with MCUBENCH_NO_REGIONS), for the host's exact instruction count. */
static __attribute__((noinline, unused)) mb_measurement mb_measure(void (*op)(void *), void *ctx)
{
    uintptr_t sp, top, bottom = ((uintptr_t)MB_STACK_FLOOR() + 3) & ~(uintptr_t)3;
    __asm__ volatile("cpsid i\n mov %0, sp" : "=r"(sp) : : "memory");
    uintptr_t lo = (sp - bottom > MB_WINDOW) ? sp - MB_WINDOW : bottom;
    lo &= ~(uintptr_t)3;
    uintptr_t seen = mb_first_dirty(lo, sp);
    if (seen < sp && seen < mb_low_water) mb_low_water = seen;
    {
        register uintptr_t r0 __asm__("r0") = lo;
        register uintptr_t r1 __asm__("r1");
        register uint32_t r2 __asm__("r2") = MB_PAINT;
        __asm__ volatile("mov r1, sp\n"
                         "1: cmp r0, r1\n"
                         "bhs 2f\n"
                         "str r2, [r0]\n"
                         "adds r0, #4\n"
                         "b 1b\n"
                         "2:\n"
                         : "+r"(r0), "=r"(r1)
                         : "r"(r2)
                         : "cc", "memory");
        top = r1;
    }
    __asm__ volatile("cpsie i" ::: "memory");
    mb_measurement m;
#ifdef MCUBENCH_HEAP
    /* "Peak since": the op's peak starts at the break it finds; _sbrk raises it. */
    uintptr_t heap0 = mb_heap_brk ? mb_heap_brk : mb_heap_base();
    mb_heap_op_peak = heap0;
#endif
#ifndef MCUBENCH_NO_REGIONS
    uint32_t region = mb_next_region;
    if (region < MB_REGION_COUNT) mb_next_region = region + 1;
    else region = MB_NO_REGION;
#endif
    uint64_t t0 = mb_ticks();
#ifndef MCUBENCH_NO_REGIONS
    mcubench_region_enter(region);
    op(ctx);
    mcubench_region_exit(region);
#else
    op(ctx);
#endif
    uint64_t t1 = mb_ticks();
    m.ticks = t1 - t0;
    m.stack = (uint32_t)(top - mb_first_dirty(lo, top));
#ifdef MCUBENCH_HEAP
    m.heap = mb_heap_op_peak > heap0 ? (uint32_t)(mb_heap_op_peak - heap0) : 0;
    m.heap_used = mb_heap_brk != 0;
#endif
#ifndef MCUBENCH_NO_REGIONS
    m.region = region;
#endif
#ifdef MCUBENCH_BYTES
    m.bytes = 0;
#endif
    return m;
}

/* ---- session ---------------------------------------------------------------------------- */

typedef struct {
    uint32_t passed, failed;
} mb_session;

static inline void mb_begin(mb_session *s, const char *fw)
{
    mb_line l;
    mb_timer_init();
    s->passed = s->failed = 0;
    mb_record(&l, "begin");
    mb_text(&l, "fw", fw);
    mb_emit(&l);
}

static inline int mb_kat(mb_session *s, const char *id, const char *alg, const char *op,
                         const uint8_t *out, const uint8_t *expected, size_t n, mb_measurement m)
{
    int pass = 1;
    mb_line l;
    for (size_t i = 0; i < n; i++) pass &= out[i] == expected[i];
    mb_record(&l, "kat");
    mb_text(&l, "id", id);
    mb_text(&l, "alg", alg);
    mb_text(&l, "op", op);
    mb_text(&l, "result", pass ? "pass" : "fail");
    mb_dec(&l, "ticks", m.ticks);
    mb_dec(&l, "stack", m.stack);
#ifdef MCUBENCH_HEAP
    if (m.heap_used) mb_dec(&l, "heap", m.heap);
#endif
#ifndef MCUBENCH_NO_REGIONS
    if (m.region < MB_REGION_COUNT) mb_dec(&l, "region", m.region);
#endif
#ifdef MCUBENCH_BYTES
    if (m.bytes) mb_dec(&l, "bytes", m.bytes);
#endif
    mb_hex(&l, "out", out, n);
    if (!pass) mb_hex(&l, "expected", expected, n);
    mb_emit(&l);
    if (pass) s->passed++; else s->failed++;
    return pass;
}

static inline __attribute__((noreturn)) void mb_end(mb_session *s)
{
    mb_line l;
    mb_record(&l, "end");
    mb_dec(&l, "passed", s->passed);
    mb_dec(&l, "failed", s->failed);
    mb_dec(&l, "stack", mb_whole_run_stack());
#ifdef MCUBENCH_HEAP
    if (mb_heap_brk) mb_dec(&l, "heap", mb_heap_peak - mb_heap_base());
#endif
    mb_emit(&l);
    mb_exit(1);
}

/* ---- exception handlers (one translation unit) ------------------------------------------ */

#ifdef MCUBENCH_IMPL
#ifndef MCUBENCH_NO_REGIONS
/* `used`: kept external under this name by -flto, like the two functions. */
__attribute__((used)) volatile uint32_t MCUBENCH_REGIONS[MB_REGION_COUNT];
uint32_t mb_next_region;

MB_MARKER void mcubench_region_enter(uint32_t id)
{
    if (id < MB_REGION_COUNT) MCUBENCH_REGIONS[id] = 1;
}

MB_MARKER void mcubench_region_exit(uint32_t id)
{
    if (id < MB_REGION_COUNT) MCUBENCH_REGIONS[id] = 0;
}
#endif

volatile uint32_t mb_systick_wraps;
uintptr_t mb_low_water = UINTPTR_MAX;

#ifdef MCUBENCH_HEAP
#include <errno.h> /* newlib's errno: the reentrancy struct's, which _sbrk_r reads back */

uintptr_t mb_heap_brk, mb_heap_peak, mb_heap_op_peak;

/* newlib's malloc grows the heap through _sbrk: from the end of .bss up to mb_heap_limit(),
 * recording the run's peak break and the current operation's (see mb_measure). */
void *_sbrk(ptrdiff_t incr)
{
    uintptr_t base = mb_heap_base();
    if (mb_heap_brk == 0) {
        mb_heap_brk = base;
        if (mb_heap_peak < base) mb_heap_peak = base;
        if (mb_heap_op_peak < base) mb_heap_op_peak = base;
    }
    uintptr_t old = mb_heap_brk;
    uintptr_t room_up = mb_heap_limit() - old, room_down = old - base;
    if ((incr > 0 && (uintptr_t)incr > room_up) || (incr < 0 && (uintptr_t)(-incr) > room_down)) {
        errno = ENOMEM;
        return (void *)-1;
    }
    mb_heap_brk = old + (uintptr_t)incr;
    if (mb_heap_brk > mb_heap_peak) mb_heap_peak = mb_heap_brk;
    if (mb_heap_brk > mb_heap_op_peak) mb_heap_op_peak = mb_heap_brk;
    return (void *)old;
}
#endif

void SysTick_Handler(void)
{
    mb_systick_wraps = mb_systick_wraps + 1;
}

__attribute__((used, noreturn)) void mb_hardfault_report(const uint32_t *frame)
{
    mb_line l;
    mb_record(&l, "fault");
    mb_text(&l, "kind", "hardfault");
    mb_addr(&l, "pc", frame[6]);
    mb_addr(&l, "lr", frame[5]);
    mb_addr(&l, "xpsr", frame[7]);
#if defined(__ARM_ARCH_6M__)
    mb_addr(&l, "cfsr", 0); /* ARMv6-M has no CFSR/HFSR */
    mb_addr(&l, "hfsr", 0);
#else
    mb_addr(&l, "cfsr", *(volatile uint32_t *)0xE000ED28u);
    mb_addr(&l, "hfsr", *(volatile uint32_t *)0xE000ED2Cu);
#endif
    mb_emit(&l);
    mb_exit(0);
}

/* Picks MSP or PSP from EXC_RETURN bit 2, then reports the stacked frame. */
__attribute__((naked)) void HardFault_Handler(void)
{
    __asm__ volatile("movs r0, #4\n"
                     "mov r1, lr\n"
                     "tst r0, r1\n"
                     "bne 1f\n"
                     "mrs r0, msp\n"
                     "b mb_hardfault_report\n"
                     "1: mrs r0, psp\n"
                     "b mb_hardfault_report\n");
}

void Default_Handler(void)
{
    static const char msg[] = MB_PREFIX "panic msg=unexpected exception or interrupt\n";
    mb_write(msg, sizeof msg - 1);
    mb_exit(0);
}
#endif /* MCUBENCH_IMPL */

#endif /* MCUBENCH_H */
