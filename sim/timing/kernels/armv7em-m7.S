@ Timing microbenchmarks for the Cortex-M7 model (ARMv7E-M), same structure and conventions as
@ armv7m.S: `K` (setup) → `K_loop` (body, ends in a conditional branch back) → `K_exit` → `K_end`,
@ N = 100 iterations, total = setup + 99 × body (taken) + body (not taken) + exit.
@ Rules and their sources are in sim/timing/src/m7.rs; the short names below are its citations:
@ [m7-meas] github:jnk0le/random@3dfc2abd "pipeline cycle test/doc/cortex_m7.md" (STM32H743,
@ DWT.CYCCNT), [mastodon-m7] the #CortexM7 dual-issue notes, [M7-llvm] LLVM ARMScheduleM7.td.
@ Conventions of the M7 counts: two instructions issue in one cycle when the rules allow (the
@ younger costs 0); a predicted direct branch costs its issue slot and nothing when taken (the
@ BTAC; [m7-meas]'s template runs 40 `.w` instructions and a taken `bne.w` in 20 cycles); the
@ totals below are the pipeline's, with every branch predicted; `bx lr` = 1 + P = 2.
@ Mispredictions are decided at run time from each branch's history (sim/timing/src/run.rs), so
@ they are not in the static totals: under QEMU each loop, run once from cold, mispredicts its
@ closing branch twice (the first taken back-edge, not yet seen, and the exit), 8 cycles each
@ when the flags were set right before it and 6 when set at least 6 slots before (k7_early).
@ Each setup is whole pairs, so its last instruction is the younger op of a pair and the first
@ iteration (which QEMU runs in one block with the setup) costs what the others do. Run on
@ mps2-an500 (QEMU's Cortex-M7 board) by sim/mcubench/tests/kernels_e2e.rs.
    .syntax unified
    .thumb
    .text

@ Early-ALU forwarding in the same cycle: an `add` result feeds the younger `add` of its pair
@ ([m7-meas] "result of early alu can be forwarded to late alu in 0 cycles"; [mastodon-m7]
@ `ADD.W R1,R0,R3; ADD.W R1,R1,R2` dual issue: MEASURED). The taken `bne.w` pairs with `subs`.
@ setup: [mov | movs] 1. body: [add.w | add.w] 1 + [subs | bne.w] 1 = 2 (taken or not). exit: 2.
@ M7 = 1 + 99×2 + 2 + 2 = 203.
    .global k7_pair, k7_pair_loop, k7_pair_exit, k7_pair_end
    .balign 4
    .thumb_func
k7_pair:
    mov r2, sp
    movs r0, #100
k7_pair_loop:
    add.w r1, r2, r3
    add.w r4, r4, r1
    subs r0, #1
    bne.w k7_pair_loop
k7_pair_exit:
    bx lr
k7_pair_end:

@ The same with a logic op as the producer: `eor` finishes in the late ALU, so its result is
@ not forwarded within the cycle (only add/sub/mov are early: [m7-meas]); the next cycle's
@ late-ALU consumer does not wait. setup: [mov | movs] 1. body: eor.w 1 + [add.w | subs] 1 +
@ bne.w 1 = 3.
@ M7 = 1 + 99×3 + 3 + 2 = 303.
    .global k7_late, k7_late_loop, k7_late_exit, k7_late_end
    .balign 4
    .thumb_func
k7_late:
    mov r2, sp
    movs r0, #100
k7_late_loop:
    eor.w r1, r2, r3
    add.w r4, r4, r1
    subs r0, #1
    bne.w k7_late_loop
k7_late_exit:
    bx lr
k7_late_end:

@ Two loads to different banks pair ([m7-meas] "two loads ... can be dual issued if each one is
@ targeting different bank (even and odd words)": MEASURED), a third load pairs with an ALU op
@ that uses the first two ("word loads can be consumed by late ALU in next cycle": MEASURED).
@ setup: [mov | movs] 1. body: [ldr | ldr] 1 + [ldr | adds] 1 + [subs | bne.w] 1 = 3. exit: 2.
@ M7 = 1 + 99×3 + 3 + 2 = 303.
    .global k7_loads, k7_loads_loop, k7_loads_exit, k7_loads_end
    .balign 4
    .thumb_func
k7_loads:
    mov r2, sp
    movs r0, #100
k7_loads_loop:
    ldr r1, [r2]
    ldr r3, [r2, #4]
    ldr r4, [r2, #8]
    adds r5, r1, r3
    subs r0, #1
    bne.w k7_loads_loop
k7_loads_exit:
    bx lr
k7_loads_end:

@ A byte load's result reaches the late ALU a cycle later than a word load's ([m7-meas]
@ "byte/half loads can be consumed in secend cycle by late ALU": MEASURED).
@ setup: [mov | movs] 1. body: ldrb 1 + adds (waits 1) 2 + [· | subs] 0 + bne.w 1 = 4. exit: 2.
@ M7 = 1 + 99×4 + 4 + 2 = 403.
    .global k7_ldb, k7_ldb_loop, k7_ldb_exit, k7_ldb_end
    .balign 4
    .thumb_func
k7_ldb:
    mov r2, sp
    movs r0, #100
k7_ldb_loop:
    ldrb r1, [r2]
    adds r3, r1, #1
    subs r0, #1
    bne.w k7_ldb_loop
k7_ldb_exit:
    bx lr
k7_ldb_end:

@ MACs chain on the accumulator every cycle but never pair with each other; a multiply result
@ is one cycle later than an ALU result ([m7-meas] "all multiply accumulates can be chained on
@ accumulator dependency each cycle", "can't dual issue wrt each other", "1 additional cycle of
@ result latency": MEASURED). body: mla 1 + mla 1 + add.w (waits 1) 2 + [· | subs] 0 + bne.w 1
@ = 5. setup: [mov | movs] 1. M7 = 1 + 99×5 + 5 + 2 = 503.
    .global k7_mac, k7_mac_loop, k7_mac_exit, k7_mac_end
    .balign 4
    .thumb_func
k7_mac:
    mov r2, sp
    movs r0, #100
k7_mac_loop:
    mla r1, r2, r3, r1
    mla r1, r4, r5, r1
    add.w r6, r1, #1
    subs r0, #1
    bne.w k7_mac_loop
k7_mac_exit:
    bx lr
k7_mac_end:

@ The early-ALU shifter: two inline-shifted operands never issue together ([m7-meas] operand2
@ matrix, [mastodon-m7] "only one shifted operand instruction per cycle": MEASURED), and a
@ shifted operand needs its source a cycle early ([m7-meas] "source must be available a cycle
@ earlier than normally": MEASURED): `eor`'s late result shifted in the next cycle waits one.
@ body: add.w (lsl) 1 + [add.w (lsl) | eor.w] 1 + add.w (ror, waits 1) 2 + [· | subs] 0 +
@ bne.w 1 = 5. setup: [mov | movs] 1. M7 = 1 + 99×5 + 5 + 2 = 503.
    .global k7_shift, k7_shift_loop, k7_shift_exit, k7_shift_end
    .balign 4
    .thumb_func
k7_shift:
    mov r2, sp
    movs r0, #100
k7_shift_loop:
    add.w r1, r2, r3, lsl #2
    add.w r4, r5, r6, lsl #2
    eor.w r12, r12, r1
    add.w r3, r3, r12, ror #8
    subs r0, #1
    bne.w k7_shift_loop
k7_shift_exit:
    bx lr
k7_shift_end:

@ Bitfield/extend ops issue only as the older op, and their result is an address or index a
@ cycle late ([m7-meas] "the bitfield/dsp instructions must be placed in older op", "result
@ cannot be used as index or address by load/store instructions in next cycle": MEASURED).
@ setup: [mov | movs] 1 + [movs | movs] 1 = 2. body: adds 1 + uxtb (not as younger) 1 + ldr.w
@ (index waits 1) 2 + [· | subs] 0 + bne.w 1 = 5. M7 = 2 + 99×5 + 5 + 2 = 504.
    .global k7_bitfield, k7_bitfield_loop, k7_bitfield_exit, k7_bitfield_end
    .balign 4
    .thumb_func
k7_bitfield:
    mov r2, sp
    movs r3, #1
    movs r0, #100
    movs r4, #0
k7_bitfield_loop:
    adds r4, r4, #1
    uxtb r1, r3
    ldr.w r5, [r2, r1, lsl #2]
    subs r0, #1
    bne.w k7_bitfield_loop
k7_bitfield_exit:
    bx lr
k7_bitfield_end:

@ Stores: two never pair, a load pairs with a store ([m7-meas] "cannot dual issue two stores",
@ "can be dual issued with load": MEASURED); a byte store in the cycle after another waits one
@ (store-buffer throughput of 2 cycles a byte store to alternating banks, [m7-meas]: MEASURED
@ for a continuous stream; for a pair of stores INFERRED).
@ setup: [mov | movs] 1. body: str 1 + [str | ldr] 1 + strb 1 + strb (waits 1) 2 + [· | subs] 0
@ + bne.w 1 = 6. M7 = 1 + 99×6 + 6 + 2 = 603.
    .global k7_stores, k7_stores_loop, k7_stores_exit, k7_stores_end
    .balign 4
    .thumb_func
k7_stores:
    mov r2, sp
    movs r0, #100
k7_stores_loop:
    str r1, [r2]
    str r3, [r2, #4]
    ldr r4, [r2, #8]
    strb r1, [r2, #12]
    strb r3, [r2, #16]
    subs r0, #1
    bne.w k7_stores_loop
k7_stores_exit:
    bx lr
k7_stores_end:

@ Plain extends (`uxtb`, `uxth`, `sxtb`, `sxth`, optionally rotated) do not use the early-ALU
@ shifter: they read their source in EX2, and pair, as the older op, with a shifted operand2, or
@ with a shift that then runs in the early ALU. [m7-meas] lists one by one the bitmanip ops that
@ read early and those that cannot pair with a shifted operand2, both times without the plain
@ extends (its example of a shifter op is `uxtab`), and [M7-llvm] gives `(S|U)XT(B|H)` no EX1
@ shifter and an EX2 read (MEASURED by those lists, and Arm's model; [mastodon-m7] disagrees:
@ see m7.rs `plain_extend`). Older op only, with its result a cycle late as an address: as before.
@ body: [eor.w | add.w] 1; [uxtb.w ror (r1 from the late ALU: no stall) | lsrs (early)] 1;
@ [uxtb | ldr.w (index r5 from the early lsrs: no stall)] 1; [uxtb | eor.w ror] 1;
@ [subs | bne.w] 1 = 5. (Were extends shifter users, as [mastodon-m7] has it: the first uxtb.w
@ waits a cycle for r1, the lsrs beside it runs late so the ldr.w waits one, and the last eor.w
@ cannot pair: 8.) setup: [mov | movs] 1 + [movs | movs.w] 1 = 2. M7 = 2 + 99×5 + 5 + 2 = 504.
@ Registers: r0-r6 and r12 only (the harness keeps its state in r7 and r8).
    .global k7_extend, k7_extend_loop, k7_extend_exit, k7_extend_end
    .balign 4
    .thumb_func
k7_extend:
    mov r2, sp
    movs r0, #100
    movs r3, #0
    movs r12, #0
k7_extend_loop:
    eor.w r1, r3, r12
    add.w r6, r6, #1
    uxtb.w r4, r1, ror #8
    lsrs r5, r3, #24
    uxtb r6, r1
    ldr.w r1, [r2, r5, lsl #2]
    uxtb r6, r4
    eor.w r12, r12, r4, ror #24
    subs r0, #1
    bne.w k7_extend_loop
k7_extend_exit:
    bx lr
k7_extend_end:

@ Early flags shorten a misprediction: [m7-meas] "there is flag forwarding that can reduce branch
@ misprediction penalty from 8 to 6 cycles (in case of subs + bne), instruction generating flags
@ have to be placed at least 3 cycles before branch" (MEASURED): here `subs` is seven slots before
@ `bne.w`. body: [subs | add.w] 1 + [add.w | add.w] 1 + [add.w | add.w] 1 + [add.w | bne.w] 1 = 4
@ (simple constants pair, [m7-meas] operand2 matrix). setup: [mov | movs] 1. M7 = 1 + 99×4 + 4 +
@ 2 = 403 with every branch predicted; under QEMU 403 + 2 × 6 = 415.
    .global k7_early, k7_early_loop, k7_early_exit, k7_early_end
    .balign 4
    .thumb_func
k7_early:
    mov r2, sp
    movs r0, #100
k7_early_loop:
    subs r0, #1
    add.w r1, r2, #1
    add.w r3, r2, #2
    add.w r12, r2, #3
    add.w r1, r2, #4
    add.w r3, r2, #5
    add.w r12, r2, #6
    bne.w k7_early_loop
k7_early_exit:
    bx lr
k7_early_end:
