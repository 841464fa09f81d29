@ Cortex-M33 FPU register moves, same structure and conventions as armv8m.S (static test only:
@ the M33 kernel firmware is built soft-float). Rules: github:jnk0le/random@3dfc2abd "pipeline
@ cycle test/doc/cortex_m33.md", "fpu" (RP2350): "`vmov` of two S (or one D) registers to two GPR
@ takes 2 cycles"; "`vmov` of two GPR registers to two S (or one D) takes 1 cycle"; "`vmov` of one
@ S register to one GPR takes 1 cycle, it has 2 cycles of result latency".
@ setup: movs 1. body: vmov r2, r3, s0, s1 2 + vmov s2, s3, r2, r3 1 + vmov r1, s4 1 + adds r4, r1
@ 1 + 1 (waits for r1) + subs 1 + bne.n 0 (dual issues after `subs`: +2 taken, the flags are
@ the `subs`'s) = 9 taken, 7 not. exit: bx lr 2. M33 = 1 + 99×9 + 7 + 2 = 901.
    .syntax unified
    .thumb
    .fpu fpv5-sp-d16
    .text

    .global k33_vmov, k33_vmov_loop, k33_vmov_exit, k33_vmov_end
    .balign 4
    .thumb_func
k33_vmov:
    movs r0, #100
k33_vmov_loop:
1:
    vmov r2, r3, s0, s1
    vmov s2, s3, r2, r3
    vmov r1, s4
    adds r4, r1
    subs r0, #1
    bne 1b
k33_vmov_exit:
    bx lr
k33_vmov_end:
