/* stack-test: a C firmware whose stack use exercises every construct the static stack analyzer
 * (mcubench_stack) must handle, and which reports the painted whole-run high-water mark in
 * its `end` record. Each construct is one small function; every KAT checks the value it
 * computes, so the run is also a functional test. Expected values were checked with a host
 * build of the same functions.
 *
 * Constructs: a call through an array of function pointers (dispatch), mutual recursion
 * bounded only by its argument (ping/pong: needs an annotation), a VLA and alloca (dynamic
 * SP), FP code whose callee-saved S registers are saved with VPUSH (fp_poly), a dense switch
 * compiled to TBB (classify) and a larger one to TBH (classify_wide), a tail call made after the
 * frame is popped (tail_after_frame), a constructor in .init_array (init_bias), and two
 * interrupt handlers (SysTick from mcubench.h and Irq0_Handler, pended by software).
 *
 * The expected frames of the functions (bytes of stack each one's own code uses, hand-derived
 * from its prologue in the -O2 build of firmware/c/build.sh) and the root bounds are listed in
 * stack-test/EXPECTED.md and asserted by sim/stack/tests/stack_firmware.rs. */
#define MCUBENCH_IMPL
#include "mcubench.h"

#define NOIPA __attribute__((noipa))

volatile int sink;
static int bias; /* set by the constructor */

/* ---- constructor (reached only through .init_array) ---------------------------------- */
__attribute__((constructor)) NOIPA void init_bias(void)
{
    bias = 7;
}

/* ---- function pointers ------------------------------------------------------------------ */
NOIPA int op_add(int x) { return x + 3; }
NOIPA int op_mul(int x) { return x * 5; }
NOIPA int op_buf(int x)
{
    volatile int b[6];
    for (int i = 0; i < 6; i++) b[i] = x + i;
    return b[x & 3] + b[5];
}
NOIPA int op_neg(int x) { return -x; }

static int (*const ops[4])(int) = {op_add, op_mul, op_buf, op_neg};

/* Calls through the table; the +1 keeps it from being a tail call. */
NOIPA int dispatch(int sel, int x)
{
    return ops[sel & 3](x) + 1;
}

/* ---- mutual recursion ------------------------------------------------------------------- */
NOIPA int pong(int n);
NOIPA int ping(int n)
{
    volatile int pad[2];
    pad[0] = n;
    if (n <= 0) return 0;
    return pong(n - 1) + pad[0];
}
NOIPA int pong(int n)
{
    if (n <= 0) return 1;
    return ping(n - 1) * 2 + 1;
}

/* ---- dynamic stack: VLA and alloca ---------------------------------------------------- */
NOIPA int vla_sum(int n)
{
    volatile int v[n];
    for (int i = 0; i < n; i++) v[i] = i * n;
    int s = 0;
    for (int i = 0; i < n; i++) s += v[i] ^ i;
    return s;
}
NOIPA int alloca_sum(int n)
{
    volatile uint8_t *p = __builtin_alloca((unsigned)n);
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(i + 1);
    int s = 0;
    for (int i = 0; i < n; i++) s += p[i];
    return s;
}

/* ---- FP: callee-saved S registers live across calls (VPUSH) -------------------------- */
NOIPA float fp_scale(float x) { return x * 1.5f + 0.25f; }
NOIPA float fp_poly(float x)
{
    float a = fp_scale(x);
    float b = fp_scale(a + x);
    float c = fp_scale(a * b);
    return a * b + c - x;
}

/* ---- switches: TBB and TBH ------------------------------------------------------------ */
NOIPA int classify(int k)
{
    switch (k) {
    case 0: return 11;
    case 1: return sink + 12;
    case 2: return 13 * k + sink;
    case 3: return 14;
    case 4: return sink ^ 15;
    case 5: return 16;
    case 6: return 17 + (sink << 1);
    case 7: return 18;
    case 8: return sink - 19;
    default: return -1;
    }
}

volatile uint32_t wsink; /* unsigned: the products wrap without undefined behaviour */
#define W(n, c) wsink = wsink * (n) + (c)
#define BIG(n) (W(n, 1), W(n, 2), W(n, 3), W(n, 4), W(n, 5), W(n, 6), W(n, 7), W(n, 8), W(n, 9), \
                W(n, 10), W(n, 11), (int)(wsink & 0xffffu))
NOIPA int classify_wide(int k)
{
    wsink = 1;
    switch (k) {
    case 0: return BIG(3);
    case 1: return BIG(5);
    case 2: return BIG(7);
    case 3: return BIG(9);
    case 4: return BIG(11);
    case 5: return BIG(13);
    case 6: return BIG(15);
    case 7: return BIG(17);
    case 8: return BIG(19);
    case 9: return BIG(21);
    default: return 0;
    }
}

/* ---- tail call after the frame is popped --------------------------------------------- */
NOIPA int reduce(const int *p, int n)
{
    uint32_t s = 0;
    for (int i = 0; i < n; i++) s = s * 3u + (uint32_t)p[i];
    return (int)(s & 0x7fffffffu);
}
NOIPA int finish(int s) { return s ^ 0x5a5a; }
NOIPA int step(int s) { return s * 7 + 1; }
/* Fourteen values live across two calls: callee-saved registers and spill slots make a frame
 * (`stmdb sp!, {r4-r11, lr}; sub sp, #28`), which is released before the sibling call:
 * `add sp, #28; ldmia.w sp!, {r4-r11, lr}; b.w finish`. No local has its address taken,
 * which would forbid the sibling call. */
NOIPA int tail_after_frame(int x)
{
    int a0 = sink + x, a1 = sink ^ x, a2 = sink - x, a3 = sink * x, a4 = sink + 2 * x, a5 = sink ^ (x << 1);
    int a6 = sink - 3 * x, a7 = sink * (x + 1), a8 = sink + 5 * x, a9 = sink ^ (x << 3), a10 = sink - 7 * x;
    int a11 = sink * (x + 2), a12 = sink + 9 * x, a13 = sink ^ (x << 5);
    int s = step(x);
    s = step(s ^ a0) + a1;
    return finish(((s * 3 + a2) ^ a3) + a4 * a5 - a6 + a7 * a8 + (a9 ^ a10) + a11 * a12 + a13);
}

/* ---- interrupt handler pended by software -------------------------------------------- */
#define NVIC_ISER0 (*(volatile uint32_t *)0xE000E100u)
#define NVIC_ISPR0 (*(volatile uint32_t *)0xE000E200u)
volatile int irq0_result;
volatile int irq0_count;

void Irq0_Handler(void)
{
    int local[8];
    for (int i = 0; i < 8; i++) local[i] = dispatch(i, i + 1);
    irq0_result = reduce(local, 8);
    irq0_count = irq0_count + 1;
}

/* ---- KATs ------------------------------------------------------------------------------ */
struct job {
    int (*fn)(int);
    int arg;
    int out;
};

static void run(void *ctx)
{
    struct job *j = ctx;
    j->out = j->fn(j->arg);
}

static int t_dispatch(int x) { return dispatch(0, x) + dispatch(1, x) + dispatch(2, x) + dispatch(3, x); }
static int t_ping(int n) { return ping(n); }
static int t_vla(int n) { return vla_sum(n); }
static int t_alloca(int n) { return alloca_sum(n); }
static int t_fp(int x) { return (int)fp_poly((float)x); }
static int t_switch(int k) { return classify(k) + classify(k + 3) + classify(k + 20); }
static int t_switch_wide(int k) { return classify_wide(k) + classify_wide(k + 5); }
static int t_tail(int x) { return tail_after_frame(x); }
static int t_irq(int x)
{
    NVIC_ISER0 = 1u;
    NVIC_ISPR0 = 1u; /* pend IRQ 0: Irq0_Handler runs before the next instruction completes */
    __asm__ volatile("dsb\n isb" ::: "memory");
    return irq0_result + irq0_count + x;
}

struct test {
    const char *id;
    int (*fn)(int);
    int arg;
    int expected;
};

static const struct test tests[] = {
    {"stack/dispatch", t_dispatch, 9, 76},
    {"stack/ping-pong", t_ping, 10, 145},
    {"stack/vla", t_vla, 24, 6708},
    {"stack/alloca", t_alloca, 40, 820},
    {"stack/fp-vpush", t_fp, 3, 138},
    {"stack/switch-tbb", t_switch, 1, 26},
    {"stack/switch-tbh", t_switch_wide, 2, 21776},
    {"stack/tail-call", t_tail, 5, 22928},
    {"stack/irq", t_irq, 1, 22942},
};

static void be32(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 24); b[1] = (uint8_t)(v >> 16); b[2] = (uint8_t)(v >> 8); b[3] = (uint8_t)v;
}

int main(void)
{
    mb_session s;
    mb_begin(&s, "stack-test-c");
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        struct job j = {tests[i].fn, tests[i].arg + bias - 7, 0};
        mb_measurement m = mb_measure(run, &j);
        uint8_t out[4], exp[4];
        be32(out, (uint32_t)j.out);
        be32(exp, (uint32_t)tests[i].expected);
        mb_kat(&s, tests[i].id, "stack-test", "compute", out, exp, 4, m);
    }
    mb_end(&s);
}
