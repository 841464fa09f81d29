/* stack-calls: shared declarations of main.c and tables.c (see main.c). */
#ifndef STACK_CALLS_H
#define STACK_CALLS_H
#include <stdint.h>

typedef int (*op_fn)(int, int);
struct driver {
    void (*init)(void);
    int (*write)(const char *s, unsigned n);
};
typedef void (*command_fn)(int);
typedef void (*job_fn)(int);

/* tables.c: read-only tables the analysis can read (defined in their own file, so that the
 * compiler cannot fold their loads into direct calls). */
extern const op_fn ops[3];
extern const struct driver uart_driver;
extern const command_fn commands[2];
extern const uintptr_t build_ids[2];

/* main.c */
int op_add(int a, int b);
int op_sub(int a, int b);
int op_mul(int a, int b);
void uart_init(void);
int uart_write(const char *s, unsigned n);
void cmd_flush(int arg);
void cmd_status(int arg);
void deep_report(int code);
#endif
