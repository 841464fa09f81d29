/* Varied code for the differential decoder test (mcubench-thumb): switches (TBB/TBH), float and
 * double math, 64-bit multiply, division, copy loops, function pointers, recursion, VLAs. */
#include <stdint.h>
#include <stddef.h>

__attribute__((optimize("no-tree-loop-distribute-patterns")))
void *memcpy(void *d, const void *s, size_t n) {
    uint8_t *dp = d;
    const uint8_t *sp = s;
    while (n--) *dp++ = *sp++;
    return d;
}

__attribute__((optimize("no-tree-loop-distribute-patterns")))
void *memset(void *d, int c, size_t n) {
    uint8_t *dp = d;
    while (n--) *dp++ = (uint8_t)c;
    return d;
}

void copy_words(uint32_t *d, const uint32_t *s, unsigned n) {
    for (unsigned i = 0; i < n; i++) d[i] = s[i] ^ (s[i] >> 3);
}

int small_switch(int x) {
    switch (x) {
    case 0: return 11;
    case 1: return 27;
    case 2: return 3;
    case 3: return 91;
    case 4: return 45;
    case 5: return 8;
    case 6: return 77;
    default: return -1;
    }
}

volatile int sink;
int big_switch(int x, int y) {
    switch (x) {
    case 0: sink = y; y += 3; break;
    case 1: y *= 7; break;
    case 2: y ^= 0x55; break;
    case 3: y = y / 3; break;
    case 4: y -= 100; break;
    case 5: sink = y * y; break;
    case 6: y <<= 2; break;
    case 7: y = ~y; break;
    case 8: y = y % 17; break;
    case 9: y += 1000; break;
    case 10: y = -y; break;
    case 11: y |= 0x100; break;
    case 12: y &= 0xff; break;
    case 13: y = y * y * y; break;
    case 14: sink = 14; break;
    case 15: y = (y >> 5) | 1; break;
    case 200: y = 200; break;
    case 300: y = 300 + sink; break;
    default: y = 0; break;
    }
    for (int i = 0; i < 40; i++) {
        switch ((i + y) & 31) {
        case 0: sink += 1; break; case 1: sink += 2; break; case 2: sink ^= 3; break;
        case 3: sink -= 4; break; case 4: sink += 5; break; case 5: sink *= 6; break;
        case 6: sink += 7; break; case 7: sink |= 8; break; case 8: sink += 9; break;
        case 9: sink &= 10; break; case 10: sink += 11; break; case 11: sink -= 12; break;
        case 12: sink += 13; break; case 13: sink ^= 14; break; case 14: sink += 15; break;
        case 15: sink += 16; break; case 16: sink -= 17; break; case 17: sink += 18; break;
        case 18: sink <<= 1; break; case 19: sink += 20; break; case 20: sink >>= 1; break;
        default: sink += i; break;
        }
    }
    return y;
}

uint64_t mul64(uint64_t a, uint64_t b) { return a * b; }
int64_t smul64(int32_t a, int32_t b) { return (int64_t)a * b; }
uint64_t mac64(uint64_t acc, uint32_t a, uint32_t b) { return acc + (uint64_t)a * b; }
uint32_t udiv32(uint32_t a, uint32_t b) { return a / b + a % b; }
int32_t sdiv32(int32_t a, int32_t b) { return a / b; }
uint64_t udiv64(uint64_t a, uint64_t b) { return a / b; }
int32_t mla32(int32_t a, int32_t b, int32_t c) { return a * b + c; }
int32_t mls32(int32_t a, int32_t b, int32_t c) { return c - a * b; }

float fmath(float a, float b, float c) {
    float r = a * b + c;
    if (r > 1.5f) r = r / (a + 0.25f);
    return r - b * c;
}

double dmath(double a, double b) {
    double r = a * b - a / (b + 1.0);
    return r < 0 ? -r : r;
}

float poly(const float *x, int n) {
    float acc = 0;
    for (int i = 0; i < n; i++) acc = acc * x[i] + 1.0f;
    return acc;
}

int fcmp_int(float a, float b) { return (int)(a < b ? a : b); }
float i2f(int a, unsigned b) { return (float)a + (float)b; }
double f2d(float a) { return (double)a * 3.0; }

typedef int (*op_fn)(int, int);
static int op_add(int a, int b) { return a + b; }
static int op_sub(int a, int b) { return a - b; }
static int op_mul(int a, int b) { return a * b; }
op_fn ops[3] = { op_add, op_sub, op_mul };
int apply(int which, int a, int b) { return ops[which % 3](a, b); }
int apply_all(int a, int b) {
    int r = 0;
    for (int i = 0; i < 3; i++) r += ops[i](a, b);
    return r;
}

unsigned fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int vla_sum(int n) {
    volatile int buf[n];
    for (int i = 0; i < n; i++) buf[i] = i * 3;
    int s = 0;
    for (int i = 0; i < n; i++) s += buf[i];
    return s;
}

int big_frame(int k) {
    volatile uint8_t buf[1500];
    for (int i = 0; i < 1500; i += 7) buf[i] = (uint8_t)(i + k);
    return buf[k % 1500];
}

int cond_select(int a, int b, int c) {
    int r = a > b ? a - b : b - a;
    if (c == 3) r += 5;
    return r < c ? r : c;
}

uint32_t bits(uint32_t x) {
    return (x >> 3 & 0x1f) | ((x & 0xff) << 12) | (uint32_t)__builtin_clz(x | 1) | __builtin_bswap32(x);
}

int16_t sat16(int32_t x) { return x > 32767 ? 32767 : x < -32768 ? -32768 : (int16_t)x; }

int dot16(const int16_t *a, const int16_t *b, int n) {
    int acc = 0;
    for (int i = 0; i < n; i++) acc += a[i] * b[i];
    return acc;
}

void entry(void) {
    uint32_t a[16], b[16];
    float f[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    memset(a, 1, sizeof a);
    memcpy(b, a, sizeof b);
    copy_words(a, b, 16);
    sink = small_switch(sink) + big_switch(sink, 3) + (int)mul64(sink, 7) + (int)smul64(sink, 3)
        + (int)mac64(1, 2, sink) + (int)udiv32(sink, 3) + sdiv32(sink, 5) + (int)udiv64(sink, 9)
        + mla32(sink, 2, 3) + mls32(sink, 4, 5) + (int)fmath(sink, 2, 3) + (int)dmath(sink, 4)
        + (int)poly(f, 8) + fcmp_int(sink, 1) + (int)i2f(sink, 2) + (int)f2d(sink) + apply(sink, 1, 2)
        + apply_all(sink, 3) + (int)fib(sink & 7) + vla_sum(sink & 15) + big_frame(sink)
        + cond_select(sink, 1, 2) + (int)bits(sink) + sat16(sink)
        + dot16((const int16_t *)a, (const int16_t *)b, 8);
    for (;;) {}
}
