/* A vector table at the start of `.text` (no vector-table section, no symbol size: the
 * linker script puts `.text.vectors` first), with function pointers in read-only data later
 * in `.text` and in a literal pool. The table's extent is the core's maximum (16 + 240 words
 * on a Cortex-M4) but it ends at the first word past the 16 system vectors that is neither
 * 0 nor a Thumb address in code: here the first instruction of Reset_Handler. The pointers
 * further on are address-taken, never exception roots.
 *
 * Handlers: Reset, NMI (2), HardFault (3), SysTick (15).
 *
 * Expected bounds (bytes below the entry SP):
 *   op_add        push {r4, lr}                                       =   8
 *   op_mul        push {r4-r7}                                        =  16
 *   dispatch      push {r3, lr} = 8; blx r3 at depth 8 reaches op_add / op_mul
 *                 (address-taken, from the table `ops`): 8 + 16       =  24
 *   Reset_Handler push {r4, lr} = 8; bl dispatch at depth 8: 8 + 24   =  32 (bounded)
 *   NMI, HardFault `b .`: 0; SysTick push {r4, lr}: 8
 *   MSP           108 B per level (Cortex-M4F), every handler its own level:
 *                 32 + (0 + 108) + (0 + 108) + (8 + 108)              = 364
 */
    .syntax unified
    .cpu cortex-m4
    .thumb

    .section .text.vectors, "ax"
__vectors:
    .word 0x20010000
    .word Reset_Handler
    .word NMI_Handler
    .word HardFault_Handler
    .word 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
    .word SysTick_Handler

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

    .section .rodata.ops, "a"
    .balign 4
    .type ops, %object
ops:
    .word op_add
    .word op_mul
    .size ops, . - ops
