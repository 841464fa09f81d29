/* newlib without stdio and without exit (sim/stack/tests/stack_newlib4.rs): malloc, errno and
 * strtol only, then an endless loop. Such an ELF has none of newlib's stdio symbols, so which
 * newlib it holds shows only in its reentrancy data (3.x: `_global_impure_ptr`; 4.x: a global
 * `_impure_data`). Not run: only its symbols are checked. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

extern uint32_t __stack_top[];
void Reset_Handler(void);
volatile long sink;

__attribute__((noreturn)) void Reset_Handler(void)
{
    char *p = malloc(32);
    if (p) {
        p[0] = '4', p[1] = '2', p[2] = 0;
        errno = 0;
        sink = strtol(p, 0, 10) + errno;
        free(p);
    }
    for (;;) {}
}

typedef void (*vector)(void);
__attribute__((section(".vector_table"), used)) const vector vector_table[2] = {(vector)__stack_top, Reset_Handler};
