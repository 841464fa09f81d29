@ Timing microbenchmarks for Cortex-M3 and Cortex-M4 (ARMv7-M subset: runs on both).
@ Each kernel K is `K` (setup) → `K_loop` (body, ends in a conditional branch back to K_loop)
@ → `K_exit` (epilogue) → `K_end`. The loop runs N = 100 times (r0 counts down).
@ Expected cycles are derived from the TRM tables (see sim/timing/src/lib.rs for the citations),
@ at zero wait states with P = 1 (taken branch = 2 cycles, `bx lr` = 2 cycles):
@   total = setup + 99 × (body with the branch taken) + (body with the branch not taken) + exit
@ The loop branches to global labels, so they assemble to the 32-bit `bne.w`; its not-taken
@ exit costs 2 instead of 1 when fewer than two 16-bit instructions (or no multi-cycle one) ran
@ since the taken branch: its speculative target fetch takes a fetch slot (k_spec, below).
@ The same numbers are asserted by sim/timing/tests/kernels.rs. Setups end with `movs r0, #100`
@ so the first iteration pays exactly what the others pay (no pairing across the loop label).
@ Every kernel starts word aligned (.balign 4), so where each 32-bit instruction sits in its
@ fetch word is fixed; loops of 32-bit instructions start word aligned unless the kernel tests
@ the fetch rules (k_wide*).
    .syntax unified
    .thumb
    .text

@ subs; bne — the classic delay loop.
@ setup: movs 1. body: subs 1 + bne.w 1 (+P=1 taken) → 3 taken; not taken 1 + 1 (the fetch
@ slot: only `subs` is 16-bit) → 3. exit: bx lr 2. M3 = M4 = 1 + 99×3 + 3 + 2 = 303.
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

@ Three independent loads from the same base: LDR 2, then each following load pipelines (1).
@ setup: movs 1 + mov r2, sp 1 = 2. body: ldr 2 + ldr 1 + ldr 1 + subs 1 + bne 2 = 7 taken, 6 not.
@ exit: 2. M3 = M4 = 2 + 99×7 + 6 + 2 = 703.
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

@ A load whose address is the previous load's result cannot pipeline: 2 + 2.
@ setup: mov 1 + str 1 (STR imm is always 1) + movs 1 = 3. The setup ends in an ALU op so the
@ first loop load neither pipelines behind the store nor waits on an address register.
@ body: ldr r1,[r2] 2 + ldr r1,[r1] 2 (address needs r1) + subs 1 + bne 2 = 7 taken, 6 not.
@ exit: 2. M3 = M4 = 3 + 99×7 + 6 + 2 = 704.
    .global k_chase, k_chase_loop, k_chase_exit, k_chase_end
    .balign 4
    .thumb_func
k_chase:
    mov r2, sp
    str r2, [sp]
    movs r0, #100
k_chase_loop:
    ldr r1, [r2]
    ldr r1, [r1]
    subs r0, #1
    bne k_chase_loop
k_chase_exit:
    bx lr
k_chase_end:

@ LDM and STM of 4 registers: 1+N = 5 each.
@ setup: movs 1 + mov 1 = 2. body: ldmia 5 + stmia 5 + subs 1 + bne 2 = 13 taken, 12 not.
@ exit: 2. M3 = M4 = 2 + 99×13 + 12 + 2 = 1303.
    .global k_ldm, k_ldm_loop, k_ldm_exit, k_ldm_end
    .balign 4
    .thumb_func
k_ldm:
    mov r2, sp
    movs r0, #100
k_ldm_loop:
    ldmia r2, {r3, r4, r5, r6}
    stmia r2, {r3, r4, r5, r6}
    subs r0, #1
    bne k_ldm_loop
k_ldm_exit:
    bx lr
k_ldm_end:

@ A forward conditional branch that is never taken costs 1 in the TRM table, 2 here: the 32-bit
@ `beq.w` after only one 16-bit instruction (`cmp`) since the loop's taken branch loses its fetch
@ slot to the speculative target fetch (k_spec). The stall fetches a word: `subs` then leaves
@ enough ahead for the loop's `bne.w`. body: cmp 1 + beq.w (not taken) 1+1 + subs 1 + bne.w 2 =
@ 6 taken, 5 not. setup: mov.w 1 + mov.w 1 = 2 (32-bit, so that the first pass, run on from
@ the setup, has nothing fetched ahead either). exit: 2. M3 = M4 = 2 + 99×6 + 5 + 2 = 603
@ (TRM table: 503).
    .global k_branch, k_branch_loop, k_branch_exit, k_branch_end
    .balign 4
    .thumb_func
k_branch:
    mov.w r0, #100
    mov.w r1, #7
k_branch_loop:
    cmp r1, #0
    beq k_branch_exit
    subs r0, #1
    bne k_branch_loop
k_branch_exit:
    bx lr
k_branch_end:

@ Multiply-accumulate chain: MLA is 1 cycle on M4 and 2 on M3; UMLAL 1 on M4, 4–7 on M3
@ (the model's fixed estimate: 6).
@ setup: mov.w 1 + movs 1 + movs 1 = 3 (mov.w: the loop starts word aligned). exit: 2.
@ body M4: 4×mla 4 + umlal 1 + subs 1 + bne 2 = 8 taken, 8 not (the fetch slot: all 1-cycle, one
@ 16-bit) → 3 + 99×8 + 8 + 2 = 805.
@ body M3: 4×mla 8 + umlal 6 + subs 1 + bne 2 = 17 taken, 16 not (the multi-cycle MLAs left
@ words fetched ahead) → 3 + 99×17 + 16 + 2 = 1704.
    .global k_mac, k_mac_loop, k_mac_exit, k_mac_end
    .balign 4
    .thumb_func
k_mac:
    mov.w r0, #100
    movs r2, #3
    movs r3, #5
k_mac_loop:
    mla r1, r2, r3, r1
    mla r1, r2, r3, r1
    mla r1, r2, r3, r1
    mla r1, r2, r3, r1
    umlal r4, r5, r2, r3
    subs r0, #1
    bne k_mac_loop
k_mac_exit:
    bx lr
k_mac_end:

@ TBB switch: TBB is "at least two cycles for the load, one cycle for the add, and three cycles
@ for the pipeline reload" (Cortex-M3/M4 TRM §3.3.2; sim/timing/src/m3m4.rs target_loaded): 6.
@ setup: movs 1 + movs 1 = 2.
@ body: tbb 6, case0: subs 1 + bne 2 → but the table jumps to case0, so the executed path per
@ iteration is tbb (6) + subs (1) + bne.w (2 taken) = 9, last iteration 6 + 1 + 2 (not taken,
@ the fetch slot: the case block is entered by the TBB's branch) = 9. exit: 2.
@ M3 = M4 = 2 + 99×9 + 9 + 2 = 904 (Table 3-1's 2+P with P = 2, an execute-time target: 704).
@ (The table bytes follow the TBB; the test prices the executed path: tbb block, then the case
@ block.)
    .global k_tbb, k_tbb_loop, k_tbb_case, k_tbb_exit, k_tbb_end
    .balign 4
    .thumb_func
k_tbb:
    movs r0, #100
    movs r1, #0
k_tbb_loop:
    tbb [pc, r1]
k_tbb_table:
    .byte (k_tbb_case - k_tbb_table) / 2
    .byte (k_tbb_case - k_tbb_table) / 2
    .p2align 1
k_tbb_case:
    subs r0, #1
    bne k_tbb_loop
k_tbb_exit:
    bx lr
k_tbb_end:

@ Fetch: three 32-bit instructions in a row that straddle fetch words (start at a halfword) cost
@ one extra cycle, and a branch to such an instruction one more than P = 1 (compendium.i-0.nl
@ "Alignment rules", measured on a Cortex-M4; the TRM's "P: 1 to 3 depending on the alignment
@ and width of the target instruction"). k_wide's loop starts at a halfword: setup movs 1. body:
@ 3 × add.w 3 + 1 (the run) + subs 1 + bne.w 1 = 6 not taken; taken +P = 1 and +1 because the
@ target (the first add.w) straddles: 8. Not taken +1 more (the fetch slot, k_spec): 7. exit: 2.
@ M3 = M4 = 1 + 99×8 + 7 + 2 = 802.
    .global k_wide, k_wide_loop, k_wide_exit, k_wide_end
    .balign 4
    .thumb_func
k_wide:
    movs r0, #100
k_wide_loop:
    add.w r1, r1, #1
    add.w r2, r2, #1
    add.w r3, r3, #1
    subs r0, #1
    bne k_wide_loop
k_wide_exit:
    bx lr
k_wide_end:

@ The same loop word aligned (setup mov.w): no fetch penalty. body: 3 + 1 + 1 (+1 taken) = 6
@ taken, 5 + 1 (the fetch slot, k_spec) = 6 not. M3 = M4 = 1 + 99×6 + 6 + 2 = 603.
    .global k_wide_aligned, k_wide_aligned_loop, k_wide_aligned_exit, k_wide_aligned_end
    .balign 4
    .thumb_func
k_wide_aligned:
    mov.w r0, #100
k_wide_aligned_loop:
    add.w r1, r1, #1
    add.w r2, r2, #1
    add.w r3, r3, #1
    subs r0, #1
    bne k_wide_aligned_loop
k_wide_aligned_exit:
    bx lr
k_wide_aligned_end:

@ A multi-cycle instruction inside a straddling run arms the run's extra cycle again: the third
@ straddling instruction after it pays one more (jnk0le/random@d8db9f9 "cortex_m3m4.md", citing
@ IACR ePrint 2025/523: "multi-cycle instruction followed by three unaligned 32-bit
@ instructions"). The loop starts at a halfword (three 16-bit setup instructions). setup: 3.
@ body: ldr.w 2 (run 1) + add.w 1 + add.w 1 + 1 (the run's third) + add.w 1 + 1 (the third after
@ the load) + subs 1 + bne 1 = 9 not taken; taken +P = 1 and +1 for the straddling target (the
@ ldr.w): 11. exit: 2. M3 = M4 = 3 + 99×11 + 9 + 2 = 1103; without the load's rule 1003.
    .global k_wide_load, k_wide_load_loop, k_wide_load_exit, k_wide_load_end
    .balign 4
    .thumb_func
k_wide_load:
    mov r2, sp
    movs r0, #100
    movs r1, #0
k_wide_load_loop:
    ldr.w r3, [r2, #4]
    add.w r1, r1, #1
    add.w r12, r12, #1
    add.w r1, r1, #2
    subs r0, #1
    bne k_wide_load_loop
k_wide_load_exit:
    bx lr
k_wide_load_end:

@ A 32-bit load that straddles fetch words (starts at a halfword) does not pipeline behind the
@ load before it (jnk0le/random "cortex_m3m4.md", STM32F103/F407: "32bit opcode loads (ldr.w,
@ ldrb.w) may fail to pipeline correctly if they are not positioned at word aligned
@ boundaries"). k_ldr_straddle's loop starts at a word, so its ldr.w is at a halfword. setup:
@ mov 1 + movs 1 = 2. body: ldr 2 + ldr.w 2 (1 if it pipelined) + subs 1 + bne 1 (+P = 1) = 7
@ taken, 6 not. exit: 2. M3 = M4 = 2 + 99×7 + 6 + 2 = 703; without the rule 603.
    .global k_ldr_straddle, k_ldr_straddle_loop, k_ldr_straddle_exit, k_ldr_straddle_end
    .balign 4
    .thumb_func
k_ldr_straddle:
    mov r2, sp
    movs r0, #100
k_ldr_straddle_loop:
    ldr r3, [r2]
    ldr.w r1, [r2, #4]
    subs r0, #1
    bne k_ldr_straddle_loop
k_ldr_straddle_exit:
    bx lr
k_ldr_straddle_end:

@ The same loop with the ldr.w word aligned (one more 16-bit setup instruction): it pipelines.
@ setup 3. body: 2 + 1 + 1 + 1 (+1) = 6 taken, 5 not. M3 = M4 = 3 + 99×6 + 5 + 2 = 604.
    .global k_ldr_aligned, k_ldr_aligned_loop, k_ldr_aligned_exit, k_ldr_aligned_end
    .balign 4
    .thumb_func
k_ldr_aligned:
    mov r2, sp
    movs r0, #100
    movs r1, #0
k_ldr_aligned_loop:
    ldr r3, [r2]
    ldr.w r1, [r2, #4]
    subs r0, #1
    bne k_ldr_aligned_loop
k_ldr_aligned_exit:
    bx lr
k_ldr_aligned_end:

@ A load after a store does not pipeline (jnk0le/random "cortex_m3m4.md", measured on STM32F103
@ and STM32F407: "stores cannot be pipelined with following load instructions"); a store after
@ a load does. setup: mov 1 + movs 1 = 2. body: str 1 + ldr 2 + str 1 + subs 1 + bne 1 (+1) =
@ 7 taken, 6 not. exit: 2. M3 = M4 = 2 + 99×7 + 6 + 2 = 703.
    .global k_stld, k_stld_loop, k_stld_exit, k_stld_end
    .balign 4
    .thumb_func
k_stld:
    mov r2, sp
    movs r0, #100
k_stld_loop:
    str r1, [r2]
    ldr r3, [r2, #4]
    str r3, [r2, #8]
    subs r0, #1
    bne k_stld_loop
k_stld_exit:
    bx lr
k_stld_end:

@ A not-taken conditional branch loses its cycle's fetch slot to the speculative fetch of its
@ target (Cortex-M3 TRM r2p0 §1.4 "Prefetch Unit": the address "is speculatively presented
@ (consuming a fetch slot on the bus)"; the PFU fetches one word a cycle into a 3-word FIFO).
@ With only 32-bit instructions before it since the last taken branch, nothing was fetched ahead
@ and the next instruction waits a cycle; each 16-bit instruction leaves a halfword ahead, and
@ two cover the lost word (jnk0le/random "CM3_pipetest_tmpl.S": a not-taken `bne.w` after 32-bit
@ instructions "will also take 2 cycles if there is less than 2 compressed instructions").
@ setup: mov.w 1 + mov.w 1 = 2 (32-bit, so that the first pass, run on from the setup, also has
@ nothing fetched ahead; the loop starts word aligned). body block 1 (entered by the taken
@ `bne.w`): add.w 1 + cmp.w 1 + beq.w not
@ taken 1+1 = 4. block 2: adds 1 + adds 1 + subs.w 1 + bne.w 1 (+P=1 taken; not taken: two
@ halfwords ahead, no wait) = 5 taken, 4 not. exit: bx lr 2.
@ M3 = M4 = 2 + 99×(4+5) + (4+4) + 2 = 903 (without the fetch slot: 2 + 99×8 + 7 + 2 = 803).
    .global k_spec, k_spec_loop, k_spec_next, k_spec_exit, k_spec_end
    .balign 4
    .thumb_func
k_spec:
    mov.w r1, #0
    mov.w r0, #100
k_spec_loop:
    add.w r1, r1, #1
    cmp.w r0, #255
    beq.w k_spec_exit
k_spec_next:
    adds r2, #1
    adds r3, #1
    subs.w r0, r0, #1
    bne.w k_spec_loop
k_spec_exit:
    bx lr
k_spec_end:
