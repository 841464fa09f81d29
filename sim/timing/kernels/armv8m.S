@ Timing microbenchmarks for the Cortex-M33 pipeline (ARMv8-M Mainline), same structure and
@ conventions as armv7m.S. The loops branch back to a local label so that the branch is the
@ 16-bit `bne.n` (a branch to a global label assembles to the 32-bit form): on the M33 only two
@ 16-bit instructions dual issue. Rules: github:jnk0le/random@3dfc2abd "pipeline cycle
@ test/doc/cortex_m33.md" (RP2350, measured with DWT.CYCCNT); citations in sim/timing/src/m33.rs.
    .syntax unified
    .thumb
    .text

@ A taken `bne.n` dual issues with a preceding 16-bit instruction that sets no flags ("effectively
@ executing in 1 cycle", 0 not taken). setup: movs 1. body: subs 1 + add 1 + bne 0 (+1 taken) = 3
@ taken, 2 not. exit: bx lr 1+P = 2. M33 = 1 + 99×3 + 2 + 2 = 302 (the M4 table: 1 + 99×4 + 3 + 2 = 402).
    .global k33_pair, k33_pair_loop, k33_pair_exit, k33_pair_end
    .balign 4
    .thumb_func
k33_pair:
    movs r0, #100
k33_pair_loop:
1:
    subs r0, #1
    add r1, r2
    bne 1b
k33_pair_exit:
    bx lr
k33_pair_end:

@ Loads issue in 1 cycle with a load-to-use latency of 2 (a dependent next instruction waits 1),
@ and a load-to-store latency of 1 (storing the loaded value does not wait). A `bne.n` after a
@ flag-setting 16-bit instruction: 0 not taken, 2 taken. setup: mov 1 + movs 1 = 2. body: ldr 1
@ + adds 1+1 + ldr 1 + str 1 + subs 1 + bne 0 (+2 taken) = 8 taken, 6 not. exit: 2.
@ M33 = 2 + 99×8 + 6 + 2 = 802 (the M4 table: 2 + 99×9 + 8 + 2 = 903).
    .global k33_loads, k33_loads_loop, k33_loads_exit, k33_loads_end
    .balign 4
    .thumb_func
k33_loads:
    mov r2, sp
    movs r0, #100
k33_loads_loop:
1:
    ldr r1, [r2]
    adds r3, r1
    ldr r4, [r2, #4]
    str r4, [r2, #8]
    subs r0, #1
    bne 1b
k33_loads_exit:
    bx lr
k33_loads_end:

@ Multiplies: `muls.n` (flag setting) takes 2 cycles (Arm KA001260); multiply results have a
@ latency of 2 (a multiplicand waits 1) but chain into a MAC's accumulator every cycle; LDM of N
@ registers takes N cycles. setup: movs ×3 = 3. body: muls 2 + mla (r1 multiplicand) 1+1 + mla
@ (r4 accumulator) 1 + ldmia {r5,r6} 2 + subs 1 + bne 0 (+2 taken) = 10 taken, 8 not. exit: 2.
@ M33 = 3 + 99×10 + 8 + 2 = 1003.
    .global k33_mul, k33_mul_loop, k33_mul_exit, k33_mul_end
    .balign 4
    .thumb_func
k33_mul:
    movs r0, #100
    movs r2, #3
    movs r3, #5
k33_mul_loop:
1:
    muls r1, r3, r1
    mla r4, r1, r3, r4
    mla r4, r2, r3, r4
    ldmia sp, {r5, r6}
    subs r0, #1
    bne 1b
k33_mul_exit:
    bx lr
k33_mul_end:
