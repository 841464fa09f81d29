/* Loops that move SP by a constant per iteration, as bignum assembly does when it pushes a
 * buffer and pops it word group by word group (`ldmia sp!` in a counted loop). Function
 * symbols have no `.size`.
 *
 * Expected bounds (bytes below the entry SP):
 *   leaf           push {r4, lr}                                         =   8
 *   bn_const_pop   push {r4-r11, lr} = 36, sub sp, #64 -> 100; the loop pops 32 B per
 *                  iteration, r3 = 2: 2 iterations, SP back at entry-36 for the pop.
 *                  frame 100 (without the loop summary: "SP is entry-100 on one path and
 *                  entry-68 on another")                                  = 100
 *   bn_const_push  push {r4, lr} = 8; the loop pushes 8 B per iteration, r2 = 4:
 *                  8 + 4 * 8 = 40; bl leaf at depth 40: 40 + 8            =  48
 *   bn_count_up    push {lr} = 4; the loop reserves 16 B per iteration while r3 counts
 *                  0, 4, 8 up to 12 (`cmp r3, #12; blo`): 3 iterations: 4 + 3 * 16 = 52
 *   bn_var         push {r4-r7, lr} = 20; pushes 8 B r1 times, pops 8 B r1 times: the
 *                  count is an argument, so the frame is 20 + 8 * r1 and the analyzer
 *                  asks for an annotation, offering 28 (1), 36 (2), 44 (3), 52 (4).
 *                  Annotated `frames: { bn_var: 52 }`:                     =  52
 *   Reset_Handler  calls them all at depth 0: max(100, 48, 52, bn_var)   = 100 with the
 *                  annotation, unbounded without.
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
    .global Reset_Handler
    .type Reset_Handler, %function
Reset_Handler:
    bl      bn_const_pop
    bl      bn_const_push
    bl      bn_count_up
    movs    r1, #3
    bl      bn_var
    b       .

    .type leaf, %function
leaf:
    push    {r4, lr}
    pop     {r4, pc}

    .type bn_const_pop, %function
bn_const_pop:
    push    {r4-r11, lr}
    sub     sp, #64
    movs    r3, #2
1:  ldmia   sp!, {r4-r11}
    subs    r3, #1
    bne     1b
    pop     {r4-r11, pc}

    .type bn_const_push, %function
bn_const_push:
    push    {r4, lr}
    movs    r2, #4
1:  stmdb   sp!, {r0, r1}
    subs    r2, r2, #1
    bne     1b
    bl      leaf
    add     sp, #32
    pop     {r4, pc}

    .type bn_count_up, %function
bn_count_up:
    push    {lr}
    movs    r3, #0
1:  sub     sp, #16
    adds    r3, #4
    cmp     r3, #12
    blo     1b
    add     sp, #48
    pop     {pc}

    .type bn_var, %function
bn_var:
    push    {r4-r7, lr}
    mov     r3, r1
1:  stmdb   sp!, {r4, r5}
    subs    r3, #1
    bne     1b
    mov     r3, r1
2:  ldmia   sp!, {r4, r5}
    subs    r3, #1
    bne     2b
    pop     {r4-r7, pc}
