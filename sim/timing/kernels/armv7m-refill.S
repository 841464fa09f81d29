@ Timing microbenchmarks for the Cortex-M3/M4 branch refill P and the store address rules, same
@ structure and conventions as armv7m.S (setup, N = 100 loop bodies, exit; zero wait states).
@ Rules (citations in sim/timing/src/m3m4.rs):
@ - [M3-ETM] Cortex-M3 TRM r2p0 (DDI 0337G) §15.3 Table 15-3: B <imm>, Bcc, BL and BX LR (LR not
@   being written) issue their target at decode, P = 1; BX Rm, CBZ/CBNZ, LDR PC, LDM to PC,
@   TBB/TBH, BX LR right after an instruction that writes LR at execute: P = 1 + 1 = 2 (Table
@   3-1: "P ... 1 to 3 depending on the alignment and width of the target instruction, and
@   whether the processor manages to speculate the address early").
@ - [jnk0le] github:jnk0le/random "pipeline cycle test/doc/cortex_m3m4.md": a store's base must be
@   ready a cycle early, so a store after a load/store that wrote its base pays 1; on the M3 a
@   pre/post-indexed store after a load pays 1.
    .syntax unified
    .thumb
    .text

@ BX Rm: execute-time, 1 + P = 1 + 2 = 3. setup: ldr (literal) 2 + movs 1 = 3. body: bx r3 3,
@ then subs 1 + bne.w 1 (+1 taken) = 6 taken, 5 + 1 not (the speculative fetch slot: `subs`
@ alone since the `bx`; armv7m.S k_spec). exit: bx lr 2 (decode-time).
@ M3 = M4 = 3 + 99×6 + 6 + 2 = 605 (without the execute-time cycle: 506).
    .global k_bxr, k_bxr_loop, k_bxr_next, k_bxr_exit, k_bxr_end
    .balign 4
    .thumb_func
k_bxr:
    ldr r3, =k_bxr_next + 1
    movs r0, #100
k_bxr_loop:
    bx r3
k_bxr_next:
    subs r0, #1
    bne k_bxr_loop
k_bxr_exit:
    bx lr
k_bxr_end:
    .ltorg

@ CBZ taken (r1 = 0): execute-time, 1 + P = 3. setup: movs 1 + movs 1 = 2. body: cbz 3, then
@ subs 1 + bne.w 1 (+1 taken) = 6 taken, 5 + 1 not (the fetch slot, as k_bxr). exit: 2.
@ M3 = M4 = 2 + 99×6 + 6 + 2 = 604 (without the execute-time cycle: 505). The test adds the CBZ
@ block's taken extra by hand.
    .global k_cbz, k_cbz_loop, k_cbz_skip, k_cbz_next, k_cbz_exit, k_cbz_end
    .balign 4
    .thumb_func
k_cbz:
    movs r1, #0
    movs r0, #100
k_cbz_loop:
    cbz r1, 1f
k_cbz_skip:
    nop
k_cbz_next:
1:
    subs r0, #1
    bne k_cbz_loop
k_cbz_exit:
    bx lr
k_cbz_end:

@ Calls and returns. BL is decode-time (1 + P = 2); `bx lr` right after `mov lr, r1` (LR written
@ during decode) is execute-time (3); POP {r4, pc} is LDM to PC with a loaded target (TRM §3.3.2:
@ "three cycles for the pipeline reload"), 1 + N + P = 1 + 2 + 3 = 6.
@ setup: push {r4, lr} 1 + 2 = 3, movs 1 = 4. body: bl 2, leaf (mov 1 + mov 1 + bx lr 3 = 5),
@ bl 2, k_call_pop (push 3 + pop 6 = 9), subs 1 + bne 1 (+1) = 21 taken, 20 + 1 not (the
@ speculative fetch slot: `subs` alone since the return; armv7m.S k_spec).
@ exit: pop {r4, pc} 6. M3 = M4 = 4 + 99×21 + 21 + 6 = 2110 (with the loaded target at P = 2:
@ 2009; with P = 1 everywhere: 1808).
    .global k_call, k_call_loop, k_call_ret, k_call_ret2, k_call_exit, k_call_end
    .global k_call_leaf, k_call_pop, k_call_leaf_end
    .balign 4
    .thumb_func
k_call:
    push {r4, lr}
    movs r0, #100
k_call_loop:
    bl k_call_leaf
k_call_ret:
    bl k_call_pop
k_call_ret2:
    subs r0, #1
    bne k_call_loop
k_call_exit:
    pop {r4, pc}
k_call_end:
    .thumb_func
k_call_leaf:
    mov r1, lr
    mov lr, r1
    bx lr
    .thumb_func
k_call_pop:
    push {r4, lr}
    pop {r4, pc}
k_call_leaf_end:

@ Stores whose base is late. Every 32-bit instruction is word aligned (no fetch rule applies).
@ setup: mov 1 + sub.w 1 + movs 1 = 3 (8 bytes: the loop starts word aligned). body: sub.w 1; str.w [r3], #4 1 + 1 (base from the ALU
@ just before, [M4] address dependency) = 2; str.w [r3], #4 1 + 1 (base written back by the
@ store before) = 2; str [r3, #4] 1 + 1 = 2; ldr after a store 2 (no pipelining); str.w [r5, #-4]!
@ after the load: M4 1, M3 2 (pre-indexed after a load); subs 1; bne 1 (+1 taken).
@ M4: 1 + 2 + 2 + 2 + 2 + 1 + 1 + 1 = 12 not taken, 13 taken: 3 + 99×13 + 12 + 2 = 1304.
@ M3: 13 / 14: 3 + 99×14 + 13 + 2 = 1404. (Without the two store rules: 1104 on both.)
    .global k_strwb, k_strwb_loop, k_strwb_exit, k_strwb_end
    .balign 4
    .thumb_func
k_strwb:
    mov r2, sp
    sub.w r5, r2, #64
    movs r0, #100
k_strwb_loop:
    sub.w r3, r2, #32
    str.w r1, [r3], #4
    str.w r1, [r3], #4
    str r1, [r3, #4]
    ldr r4, [r2]
    str.w r4, [r5, #-4]!
    subs r0, #1
    bne k_strwb_loop
k_strwb_exit:
    bx lr
k_strwb_end:
