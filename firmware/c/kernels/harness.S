@ Runs one timing kernel of sim/timing/kernels inside region markers, for the end-to-end cycle
@ test (sim/mcubench/tests/kernels_e2e.rs). ARMv6-M subset: the same code for every core.
@
@ void mb_run_kernel(uint32_t id, void (*kernel)(void));
@
@ The kernels clobber r0-r6 and use the 32 bytes at SP as scratch (k_loads, k_chase, k_ldm, k_fdiv),
@ so the id lives in r7 and the kernel address in r8, both saved, and 32 bytes are reserved.
@ The marker overhead (constant per core): the rest of mcubench_region_enter after its store,
@ `blx r8`, and after the kernel's `bx lr`: `mov r0, r7`, `bl mcubench_region_exit` and that
@ function up to its store. The test measures it with k_empty (a lone `bx lr`).
    .syntax unified
    .thumb
    .text

    .global mb_run_kernel
    .type mb_run_kernel, %function
    .thumb_func
mb_run_kernel:
    push {r4-r7, lr}
    mov r4, r8
    push {r4}
    sub sp, #32
    mov r7, r0
    mov r8, r1
    bl mcubench_region_enter
    blx r8
    mov r0, r7
    bl mcubench_region_exit
    add sp, #32
    pop {r4}
    mov r8, r4
    pop {r4-r7, pc}
    .size mb_run_kernel, . - mb_run_kernel

@ The empty kernel: its cost is the model's price of `bx lr` alone.
    .global k_empty
    .type k_empty, %function
    .thumb_func
k_empty:
    bx lr
    .size k_empty, . - k_empty
