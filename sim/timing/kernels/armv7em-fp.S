@ Cortex-M4F only: DSP and FPv4-SP kernels (same structure and conventions as armv7m.S). The
@ setups use the 32-bit `mov.w` so that each loop starts word aligned: its 32-bit instructions
@ do not straddle fetch words (that rule has its own kernels, k_wide* in armv7m.S).
    .syntax unified
    .thumb
    .fpu fpv4-sp-d16
    .text

@ FP multiply-accumulate chain: VMLA.F32 3 cycles each; VADD.F32 1.
@ setup: movs 1. body: 4×vmla 12 + 2×vadd 2 + subs 1 + bne 2 = 17 taken, 16 not. exit: 2.
@ M4 = 1 + 99×17 + 16 + 2 = 1702.
    .global k_fmac, k_fmac_loop, k_fmac_exit, k_fmac_end
    .balign 4
    .thumb_func
k_fmac:
    mov.w r0, #100
k_fmac_loop:
    vmla.f32 s0, s1, s2
    vmla.f32 s0, s1, s2
    vmla.f32 s0, s1, s2
    vmla.f32 s0, s1, s2
    vadd.f32 s3, s4, s5
    vadd.f32 s3, s4, s5
    subs r0, #1
    bne k_fmac_loop
k_fmac_exit:
    bx lr
k_fmac_end:

@ FP divide and square root: 14 cycles each; VLDR.32 2.
@ setup: movs 1. body: vldr 2 + vdiv 14 + vsqrt 14 + subs 1 + bne 2 = 33 taken, 32 not. exit: 2.
@ M4 = 1 + 99×33 + 32 + 2 = 3302.
    .global k_fdiv, k_fdiv_loop, k_fdiv_exit, k_fdiv_end
    .balign 4
    .thumb_func
k_fdiv:
    mov.w r0, #100
k_fdiv_loop:
    vldr s1, [sp]
    vdiv.f32 s0, s1, s2
    vsqrt.f32 s3, s4
    subs r0, #1
    bne k_fdiv_loop
k_fdiv_exit:
    bx lr
k_fdiv_end:

@ DSP: SMLAD and UADD8 are 1 cycle each.
@ setup: movs 1. body: 2×smlad 2 + 2×uadd8 2 + subs 1 + bne.w 2 = 7 taken, 6 + 1 not (the
@ speculative fetch slot, armv7m.S k_spec). exit: 2. M4 = 1 + 99×7 + 7 + 2 = 703.
    .global k_dsp, k_dsp_loop, k_dsp_exit, k_dsp_end
    .balign 4
    .thumb_func
k_dsp:
    mov.w r0, #100
k_dsp_loop:
    smlad r1, r2, r3, r1
    smlad r1, r2, r3, r1
    uadd8 r4, r5, r6
    uadd8 r4, r5, r6
    subs r0, #1
    bne k_dsp_loop
k_dsp_exit:
    bx lr
k_dsp_end:
