/* Firmware for tests/stack_crt.rs: started by libgloss crt0 (`_mainCRTStartup`, --specs=nosys.specs),
 * with a constructor, a destructor and an atexit handler, each with a frame of its own size, so
 * the worst path is known by hand: reset → _mainCRTStartup → __libc_init_array → ctor → touch. */
#include <stdlib.h>
extern void _mainCRTStartup(void);
static void fault(void) { for (;;) {} }
__attribute__((section(".isr_vector"), used))
void (*const vectors[16])(void) = { (void (*)(void))0x20010000, _mainCRTStartup, fault, fault };
volatile int sink;
__attribute__((noinline)) static void touch(volatile char *p, int n) { for (int i = 0; i < n; i++) p[i] = (char)i; }
__attribute__((constructor)) static void ctor(void) { volatile char buf[600]; touch(buf, sizeof buf); sink = buf[7]; }
__attribute__((destructor)) static void dtor(void) { volatile char buf[200]; touch(buf, sizeof buf); sink = buf[3]; }
static void on_exit_handler(void) { volatile char buf[300]; touch(buf, sizeof buf); sink = buf[5]; }
int main(void) { atexit(on_exit_handler); volatile char buf[40]; touch(buf, sizeof buf); return buf[1]; }
