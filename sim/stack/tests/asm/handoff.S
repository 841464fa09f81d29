/* A bootloader that hands the core over to an application: it loads the application's
 * initial SP and reset vector from its vector table and jumps with a new stack, either with
 * `msr msp, rX; bx rY` (CMSIS `__set_MSP` then a call through a pointer) or with
 * `mov sp, rX; blx rY`. Neither is alloca/VLA: the path leaves the analysed program there.
 *
 * Expected bounds (bytes below the entry SP):
 *   check           push {r4-r7}                                        = 16
 *   jump_msr        push {r3, lr} = 8, then the hand-off                = 8
 *   jump_mov        push {r3, lr} = 8, then the hand-off                = 8
 *   Reset_Handler   push {r4, lr} = 8; bl check at depth 8: 8 + 16 = 24;
 *                   bl jump_msr / jump_mov at depth 8: 8 + 8 = 16       = 24
 *   MSP             no other vector                                     = 24
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
    push    {r4, lr}
    bl      check
    ldr     r0, =0x00010000
    cbz     r4, 1f
    bl      jump_msr
1:  bl      jump_mov
    pop     {r4, pc}

    .type check, %function
check:
    push    {r4-r7}
    ldr     r4, [r0]
    adds    r0, r4, #1
    pop     {r4-r7}
    bx      lr
    .size check, . - check

    .type jump_msr, %function
jump_msr:
    push    {r3, lr}
    ldr     r1, [r0]
    ldr     r2, [r0, #4]
    msr     msp, r1
    isb
    bx      r2

    .type jump_mov, %function
jump_mov:
    push    {r3, lr}
    ldr     r1, [r0]
    ldr     r2, [r0, #4]
    mov     sp, r1
    blx     r2
    b       .
