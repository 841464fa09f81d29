/* stack-calls: the call-graph constructs of sim/mcubench/tests/stack_calls.rs, in ordinary C
 * (arm-none-eabi-gcc -O2, no C library calls, its own start-up and vector table).
 *
 * - Three independent recursions: tree_depth (calls itself twice), the recursive-descent parser
 *   parse_expr → parse_term → parse_factor → parse_expr, and emit_list ↔ emit_item.
 * - Two indirect calls that the address-taken set resolves too widely, closing false cycles:
 *   run_jobs calls jobs[i] (a writable table filled at run time with job_blink/job_count), and
 *   cmd_flush, which is address-taken (commands[]), calls run_jobs; log_event calls the hook
 *   log_hook (really only log_uart), and job_count, address-taken, calls log_event.
 * - Calls the analysis resolves per site: apply → ops[i] (constant table), driver_write →
 *   uart_driver.write (constant struct slot), handle_command → commands[i].
 * - A malloc-style hook alloc_hook (really only pool_alloc) called from three functions.
 * - deep_report: a 2 KiB frame whose address is taken (build_ids) but that nothing calls. A
 *   call resolved to every address-taken function reaches it; one resolved per site does not. */
#include "calls.h"

extern uint32_t __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[];
extern uint32_t __stack_top[];
int main(void);
void Reset_Handler(void);
void Default_Handler(void);

volatile uint32_t sink;

__attribute__((noinline)) void deep_report(int code)
{
    volatile uint8_t buf[2048];
    for (int i = 0; i < 2048; i += 64) buf[i] = (uint8_t)(code + i);
    sink = buf[(unsigned)code & 2047u];
}

/* --- recursion 1: a binary tree's depth (two recursive calls: no loop can replace them) */
struct tnode {
    const struct tnode *left, *right;
};
__attribute__((noinline)) unsigned tree_depth(const struct tnode *n)
{
    if (!n) return 0;
    unsigned l = tree_depth(n->left);
    unsigned r = tree_depth(n->right);
    return 1 + (l > r ? l : r);
}

/* --- recursion 2: a recursive-descent parser of "(1+2)*3"-style expressions */
static const char *cursor;
__attribute__((noinline)) int parse_expr(void);
__attribute__((noinline)) int parse_factor(void)
{
    if (*cursor == '(') {
        cursor++;
        int v = parse_expr();
        if (*cursor == ')') cursor++;
        return v;
    }
    int v = 0;
    while (*cursor >= '0' && *cursor <= '9') v = v * 10 + (*cursor++ - '0');
    return v;
}
__attribute__((noinline)) int parse_term(void)
{
    int v = parse_factor();
    while (*cursor == '*') {
        cursor++;
        v *= parse_factor();
    }
    return v;
}
__attribute__((noinline)) int parse_expr(void)
{
    int v = parse_term();
    while (*cursor == '+') {
        cursor++;
        v += parse_term();
    }
    return v;
}

/* --- recursion 3: printing nested lists, mutually recursive */
struct item {
    int value;
    const struct item *sublist; /* a nested list, or 0 */
    unsigned count;
};
__attribute__((noinline)) void emit_list(const struct item *v, unsigned n);
__attribute__((noinline)) void emit_item(const struct item *it)
{
    volatile char text[24];
    text[0] = (char)('0' + it->value % 10);
    sink += text[0];
    if (it->sublist) emit_list(it->sublist, it->count);
}
__attribute__((noinline)) void emit_list(const struct item *v, unsigned n)
{
    for (unsigned i = 0; i < n; i++) emit_item(&v[i]);
    sink += n;
}

/* --- a hook that really only logs to the UART */
__attribute__((noinline)) void log_uart(int event)
{
    volatile char line[16];
    line[0] = (char)event;
    sink += line[0];
}
void (*log_hook)(int) = log_uart;
__attribute__((noinline)) void log_event(int event)
{
    log_hook(event);
}

/* --- jobs registered at run time */
job_fn jobs[4];
unsigned job_count_registered;
__attribute__((noinline)) void job_blink(int i)
{
    sink ^= (uint32_t)i;
}
__attribute__((noinline)) void job_count(int i)
{
    sink += (uint32_t)i;
    log_event(i);
}
__attribute__((noinline)) void run_jobs(void)
{
    for (unsigned i = 0; i < job_count_registered; i++) jobs[i]((int)i);
}

/* --- commands, dispatched through the constant table commands[] */
void cmd_flush(int arg)
{
    run_jobs();
    sink += (uint32_t)arg;
}
void cmd_status(int arg)
{
    volatile int status[8];
    status[arg & 7] = arg;
    sink += (uint32_t)status[0];
}
__attribute__((noinline)) void handle_command(unsigned i, int arg)
{
    commands[i % 2](arg);
}

/* --- constant table and constant struct slot */
int op_add(int a, int b)
{
    return a + b;
}
int op_sub(int a, int b)
{
    return a - b;
}
int op_mul(int a, int b)
{
    volatile int t[6];
    t[a & 3] = a * b;
    return t[0];
}
__attribute__((noinline)) int apply(unsigned i, int a, int b)
{
    return ops[i % 3](a, b);
}
void uart_init(void)
{
    sink = 0;
}
int uart_write(const char *s, unsigned n)
{
    volatile char fifo[32];
    for (unsigned i = 0; i < n && i < 32; i++) fifo[i] = s[i];
    return (int)n + fifo[0];
}
__attribute__((noinline)) int driver_write(const char *s, unsigned n)
{
    return uart_driver.write(s, n);
}

/* --- a malloc-style allocator hook, called from three places */
static uint8_t pool[1024];
static unsigned pool_used;
__attribute__((noinline)) void *pool_alloc(unsigned n)
{
    if (pool_used + n > sizeof pool) return 0;
    void *p = &pool[pool_used];
    pool_used += (n + 7u) & ~7u;
    return p;
}
void *(*alloc_hook)(unsigned) = pool_alloc;
__attribute__((noinline)) void set_alloc_hook(void *(*hook)(unsigned))
{
    alloc_hook = hook;
}
__attribute__((noinline)) uint8_t *make_buffer(unsigned n)
{
    return alloc_hook(n);
}
__attribute__((noinline)) struct tnode *make_node(void)
{
    struct tnode *t = alloc_hook(sizeof *t);
    if (t) t->left = t->right = 0;
    return t;
}
__attribute__((noinline)) char *make_string(const char *s)
{
    unsigned n = 0;
    while (s[n]) n++;
    char *p = alloc_hook(n + 1);
    if (p)
        for (unsigned i = 0; i <= n; i++) p[i] = s[i];
    return p;
}

static const struct tnode leaf = {0, 0};
static const struct tnode mid = {&leaf, &leaf};
static const struct tnode root = {&mid, &leaf};
static const struct item inner[2] = {{4, 0, 0}, {5, 0, 0}};
static const struct item outer[2] = {{1, inner, 2}, {2, 0, 0}};

int main(void)
{
    set_alloc_hook(pool_alloc);
    jobs[0] = job_blink;
    jobs[1] = job_count;
    job_count_registered = 2;
    handle_command(sink, 3);
    handle_command(sink + 1, 4);
    sink += tree_depth(&root);
    cursor = "(1+2)*3";
    sink += (uint32_t)parse_expr();
    emit_list(outer, 2);
    sink += (uint32_t)apply(sink, 6, 7);
    sink += (uint32_t)driver_write("hello", 5);
    uint8_t *b = make_buffer(64);
    struct tnode *t = make_node();
    char *s = make_string("abc");
    sink += (uint32_t)(uintptr_t)b + (uint32_t)(uintptr_t)t + (uint32_t)(uintptr_t)s;
    sink += (uint32_t)build_ids[sink & 1];
    return (int)(sink & 0xff);
}

/* --- start-up */
__attribute__((noreturn)) static void semihosting_exit(int code)
{
    register uintptr_t r0 __asm__("r0") = 0x18; /* SYS_EXIT */
    register uintptr_t r1 __asm__("r1") = code == 0 ? 0x20026u : 0x20024u;
    __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
    for (;;) {}
}

__attribute__((noreturn)) void Reset_Handler(void)
{
    for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;) *d++ = *s++;
    for (uint32_t *d = __bss_start; d < __bss_end;) *d++ = 0;
    main();
    semihosting_exit(0);
}

__attribute__((noreturn)) void Default_Handler(void)
{
    for (;;) {}
}

typedef void (*vector)(void);
__attribute__((section(".vector_table"), used)) const vector vector_table[16] = {
    (vector)__stack_top, Reset_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, 0, 0, 0, 0, Default_Handler, Default_Handler, 0, Default_Handler, Default_Handler,
};
