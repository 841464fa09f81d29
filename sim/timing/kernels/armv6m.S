@ Timing microbenchmarks for Cortex-M0 (ARMv6-M), same structure as armv7m.S.
@ [M0] table: most instructions 1, LDR/STR 2, LDM/STM 1+N, taken branch 3, not taken 1,
@ BX 3, MULS 1 (fast multiplier option; 32 with the small one).
    .syntax unified
    .thumb
    .text

@ setup: movs 1. body: subs 1 + bne 3 taken / 1 not → 4 / 2. exit: bx lr 3.
@ M0 = 1 + 99×4 + 2 + 3 = 402.
    .global k_delay, k_delay_loop, k_delay_exit, k_delay_end
    .balign 4
    .thumb_func
k_delay:
    movs r0, #100
k_delay_loop:
    subs r0, #1
    bne k_delay_loop
k_delay_exit:
    bx lr
k_delay_end:

@ Loads do not pipeline on the M0: 2 each.
@ setup: movs 1 + mov 1 = 2. body: 3×ldr 6 + subs 1 + bne 3 = 10 taken, 8 not. exit: 3.
@ M0 = 2 + 99×10 + 8 + 3 = 1003.
    .global k_loads, k_loads_loop, k_loads_exit, k_loads_end
    .balign 4
    .thumb_func
k_loads:
    mov r2, sp
    movs r0, #100
k_loads_loop:
    ldr r1, [r2]
    ldr r3, [r2, #4]
    ldr r4, [r2, #8]
    subs r0, #1
    bne k_loads_loop
k_loads_exit:
    bx lr
k_loads_end:

@ LDM/STM of 3 registers (no writeback on STM needs `!` in v6-M; restore r2 with subs).
@ setup: movs 1 + mov 1 = 2. body: ldm 4 + subs r2 1 + stm 4 + subs r2 1 + subs 1 + bne 3 = 14
@ taken, 12 not. exit: 3. M0 = 2 + 99×14 + 12 + 3 = 1403.
    .global k_ldm, k_ldm_loop, k_ldm_exit, k_ldm_end
    .balign 4
    .thumb_func
k_ldm:
    mov r2, sp
    movs r0, #100
k_ldm_loop:
    ldmia r2!, {r3, r4, r5}
    subs r2, #12
    stmia r2!, {r3, r4, r5}
    subs r2, #12
    subs r0, #1
    bne k_ldm_loop
k_ldm_exit:
    bx lr
k_ldm_end:

@ MULS chain with the fast multiplier: 1 each.
@ setup: movs 1 + movs 1 = 2. body: 4×muls 4 + subs 1 + bne 3 = 8 taken, 6 not. exit: 3.
@ M0 = 2 + 99×8 + 6 + 3 = 803. With the small multiplier: 4×32 → 2 + 99×132 + 130 + 3 = 13203.
    .global k_mul, k_mul_loop, k_mul_exit, k_mul_end
    .balign 4
    .thumb_func
k_mul:
    movs r0, #100
    movs r2, #3
k_mul_loop:
    muls r1, r2, r1
    muls r1, r2, r1
    muls r1, r2, r1
    muls r1, r2, r1
    subs r0, #1
    bne k_mul_loop
k_mul_exit:
    bx lr
k_mul_end:
