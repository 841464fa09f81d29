/* Hand-written assembly as pqm4-style Cortex-M4 code has it: function symbols typed with
 * `.type f, %function` but given no `.size` (size-0 FUNC symbols), helpers reached with `bl`
 * to plain labels (local subroutines returning with `bx lr` or `pop {..., pc}`), one of them
 * placed before the first typed function (in no function's range), one called at two
 * different stack depths, and a literal pool (`.ltorg`) in the middle of a function.
 *
 * Expected bounds (bytes below the entry SP; every push is 4 B per register):
 *   leaf           push {r4, lr}                                   =  8
 *   local_b        push {r5}                                       =  4
 *   local_a        push {r4, lr} = 8, bl local_b at depth 8: 8 + 4  = 12
 *   outside_helper push {r4-r8, lr}: own frame 24, calls leaf at depth 24
 *   work           push {r4-r6, lr} = 16
 *                  bl local_a at depth 16:               16 + 12 = 28
 *                  sub sp, #8 -> depth 24, bl local_a:   24 + 12 = 36
 *                  bl outside_helper at depth 24:        24 + 24 = 48, and its call
 *                  of leaf becomes work's call at depth 24 + 24 = 48
 *                  frame (own code and local subroutines): max(16, 28, 36, 48) = 48
 *                  bound: 48 + leaf 8                              = 56
 *   far_jump       push {r4, lr} = 8; its `bl 2f` is the Thumb-1 far branch LLVM emits:
 *                  the block pops the caller's frame and returns, so it is no subroutine
 *                  and is followed as a jump                        =  8
 *   Reset_Handler  bl work, bl far_jump at depth 0: max(56, 8)       = 56
 *   MSP            no other vector (the table's symbol size is 8 B): 56
 */
    .syntax unified
    .cpu cortex-m4
    .thumb

    .section .isr_vector, "a"
    .type vectors, %object
vectors:
    .word 0x20010000
    .word Reset_Handler
    .size vectors, . - vectors

    .text
    .balign 4
/* Before any typed function of this file: no FUNC symbol covers it. */
outside_helper:
    push    {r4-r8, lr}
    bl      leaf
    pop     {r4-r8, pc}

    .type leaf, %function
leaf:
    push    {r4, lr}
    adds    r0, r0, #1
    pop     {r4, pc}
    .size leaf, . - leaf

    .global Reset_Handler
    .type Reset_Handler, %function
Reset_Handler:
    bl      work
    bl      far_jump
    b       .

    .type far_jump, %function
far_jump:
    push    {r4, lr}
    cbz     r0, 1f
    bl      2f
1:  pop     {r4, pc}
2:  adds    r0, #1
    pop     {r4, pc}

    .type work, %function
work:
    push    {r4-r6, lr}
    bl      local_a
    sub     sp, #8
    bl      local_a
    ldr     r0, =0x12345678
    b       1f
    .ltorg
1:  bl      outside_helper
    add     sp, #8
    pop     {r4-r6, pc}

local_a:
    push    {r4, lr}
    bl      local_b
    pop     {r4, pc}

local_b:
    push    {r5}
    pop     {r5}
    bx      lr
