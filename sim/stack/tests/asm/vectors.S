/* A vector table whose symbol size says where it ends, followed in its own section by a
 * table of function pointers (odd addresses of code, like handlers) and by constants. The
 * pointers are data: op_add and op_mul are address-taken call targets of dispatch's indirect
 * call, not exception handlers.
 *
 * The table: 18 words (initial SP, 15 system vectors, IRQ 0 and IRQ 1): `.size vectors` = 72.
 * Handlers: Reset, NMI (2), HardFault (3), SysTick (15), IRQ0 (16), IRQ1 (17).
 *
 * Expected bounds (bytes below the entry SP):
 *   op_add        push {r4, lr}                                       =   8
 *   op_mul        push {r4-r7}                                        =  16
 *   dispatch      push {r3, lr} = 8; blx r3 at depth 8 reaches the address-taken
 *                 op_add / op_mul: 8 + max(8, 16)                     =  24
 *   Reset_Handler push {r4, lr} = 8; bl dispatch at depth 8: 8 + 24   =  32 (bounded: the
 *                 indirect call reaches only address-taken functions)
 *   NMI, HardFault `b .`: 0; SysTick push {r4, lr}: 8; IRQ0 push {r4-r7, lr}: 20;
 *   IRQ1 sub sp, #24: 24
 *   MSP           Cortex-M4 with FPU: 104 B extended frame + 4 B alignment = 108 B per
 *                 nesting level, every handler its own level:
 *                 32 + (0 + 108) + (0 + 108) + (8 + 108) + (20 + 108) + (24 + 108) = 624
 * Reading the whole section as the table would make op_add and op_mul exception roots and
 * add two more levels to the MSP.
 */
    .syntax unified
    .cpu cortex-m4
    .thumb

    .section .isr_vector, "a"
    .type vectors, %object
vectors:
    .word 0x20010000
    .word Reset_Handler
    .word NMI_Handler
    .word HardFault_Handler
    .word 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
    .word SysTick_Handler
    .word IRQ0_Handler
    .word IRQ1_Handler
    .size vectors, . - vectors
    .type ops, %object
ops:
    .word op_add
    .word op_mul
    .size ops, . - ops
constants:
    .word 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a

    .text
    .global Reset_Handler
    .type Reset_Handler, %function
Reset_Handler:
    push    {r4, lr}
    movs    r0, #1
    bl      dispatch
    pop     {r4, pc}
    .size Reset_Handler, . - Reset_Handler

    .type dispatch, %function
dispatch:
    push    {r3, lr}
    ldr     r3, =ops
    ldr     r3, [r3, r0, lsl #2]
    blx     r3
    pop     {r3, pc}
    .ltorg
    .size dispatch, . - dispatch

    .type op_add, %function
op_add:
    push    {r4, lr}
    adds    r0, r0, r1
    pop     {r4, pc}
    .size op_add, . - op_add

    .type op_mul, %function
op_mul:
    push    {r4-r7}
    muls    r0, r1, r0
    pop     {r4-r7}
    bx      lr
    .size op_mul, . - op_mul

    .type NMI_Handler, %function
NMI_Handler:
    b       .
    .size NMI_Handler, . - NMI_Handler

    .type HardFault_Handler, %function
HardFault_Handler:
    b       .
    .size HardFault_Handler, . - HardFault_Handler

    .type SysTick_Handler, %function
SysTick_Handler:
    push    {r4, lr}
    pop     {r4, pc}
    .size SysTick_Handler, . - SysTick_Handler

    .type IRQ0_Handler, %function
IRQ0_Handler:
    push    {r4-r7, lr}
    pop     {r4-r7, pc}
    .size IRQ0_Handler, . - IRQ0_Handler

    .type IRQ1_Handler, %function
IRQ1_Handler:
    sub     sp, #24
    add     sp, #24
    bx      lr
    .size IRQ1_Handler, . - IRQ1_Handler
