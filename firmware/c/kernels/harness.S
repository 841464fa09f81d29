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

@ Exception kernel: `svc #0` inside the region, taken by mb_svc_handler (the SVCall vector, via
@ -DSVC_HANDLER in firmware/c/build.sh), which returns at once. Hand-derived total per core
@ (zero wait states; the plugin's exception rule: entry at the handler's first TB, exit after the
@ handler's `bx lr` to EXC_RETURN):
@   svc #0               M3/M4: 2 (priced as a System instruction, MRS/MSR-like); M0: 4
@   exception entry      M3/M4: 12 (TRM interrupt latency); M0: 16
@   bx lr (handler)      M3/M4: 1+P = 2; M0: 1+P = 3
@   exception exit       M3/M4: 1+8+P = 10; M0: 1+8+P = 11 (8-word unstack as an LDM)
@   bx lr (kernel)       M3/M4: 2; M0: 3
@   total                M3/M4: 28; M0: 37
    .global k_svc
    .type k_svc, %function
    .thumb_func
k_svc:
    svc #0
    bx lr
    .size k_svc, . - k_svc

    .global mb_svc_handler
    .type mb_svc_handler, %function
    .thumb_func
mb_svc_handler:
    bx lr
    .size mb_svc_handler, . - mb_svc_handler
