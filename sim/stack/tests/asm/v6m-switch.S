/* ARMv6-M switch tables as LLVM emits them for thumbv6m (Thumb-1 has no TBB/TBH): the case
 * is dispatched by writing PC from a table placed right after the code, and every case must be
 * followed as a jump inside the function (not read as an indirect jump out of it, which would
 * miss the calls in the cases).
 *
 *   sw_words    `lsls; adr; ldr rY, [rX, rI]; mov pc, rY`: a table of case addresses (+1,
 *               Thumb), as rustc -Os/-Oz emits it; its length only visible from where the
 *               entries stop being code addresses of the function (the next word is the
 *               function's first instruction).
 *   sw_bytes    `add rX, pc; ldrb rX, [rX, #4]; lsls rX, rX, #1; add pc, rX`: a table of byte
 *               offsets (halfwords from the `add pc`'s PC), as rustc -O2/-O3 emits it, with
 *               a padding byte after its three entries.
 *   sw_guarded  the word table behind `cmp r0, #1; bhi default`: two cases; the literal pool
 *               word after them is the address of a block calling `deep` that no path reaches,
 *               which the `cmp` keeps out of the table.
 *   sw_gcc      GCC's v6-M switch: `cmp r0, #2; bhi default; bl __gnu_thumb1_case_uqi` with
 *               the byte table after the `bl` (halfwords from the return address); the helper
 *               (libgcc's, as lib1funcs.S has it) returns into the case, not after the `bl`.
 *
 * Expected bounds (bytes below the entry SP; every push is 4 B per register):
 *   leaf        no stack                                                =  0
 *   mid         push {r4, lr}, bl leaf                                  =  8
 *   deep        push {r4-r7, lr} 20 + sub sp, #60                       = 80
 *   sw_words    push {r4, lr} = 8; cases: bl leaf 8 + 0, bl deep 8 + 80, bl mid 8 + 8
 *                                                                       = 88
 *   sw_bytes    push {r7, lr}; sub sp, #8 = 16; cases: bl mid 16 + 8, bl deep 16 + 80,
 *               none                                                    = 96
 *   sw_guarded  push {r4, lr} = 8; cases: bl leaf 8, bl mid 8 + 8; default: none
 *                                                                       = 16
 *               (88 if the pool word were read as a third case)
 *   __gnu_thumb1_case_uqi  push {r1}                                  =  4
 *   sw_gcc      push {r4, lr} = 8; the helper at depth 8: 8 + 4 = 12; cases: bl leaf 8,
 *               bl deep 8 + 80, bl mid 8 + 8; default: none            = 88
 *               (12 if the `bl` were a call returning into the table)
 *   Reset_Handler  bl each of the four at depth 0: max(88, 96, 16, 88)  = 96
 */
    .syntax unified
    .cpu cortex-m0
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
    .thumb_func
Reset_Handler:
    movs    r0, #1
    bl      sw_words
    movs    r0, #2
    bl      sw_bytes
    movs    r0, #0
    bl      sw_guarded
    movs    r0, #1
    bl      sw_gcc
    b       .
    .size Reset_Handler, . - Reset_Handler

    .type leaf, %function
    .thumb_func
leaf:
    movs    r0, #1
    bx      lr
    .size leaf, . - leaf

    .type mid, %function
    .thumb_func
mid:
    push    {r4, lr}
    bl      leaf
    pop     {r4, pc}
    .size mid, . - mid

    .type deep, %function
    .thumb_func
deep:
    push    {r4-r7, lr}
    sub     sp, #60
    movs    r0, #0
    add     sp, #60
    pop     {r4-r7, pc}
    .size deep, . - deep

    .balign 4
    .type sw_words, %function
    .thumb_func
sw_words:
    push    {r4, lr}
    lsls    r2, r0, #2
    adr     r3, .Lw_table
    ldr     r2, [r3, r2]
    mov     pc, r2
    .balign 4
.Lw_table:
    .word   .Lw_case0 + 1
    .word   .Lw_case1 + 1
    .word   .Lw_case2 + 1
.Lw_case0:
    bl      leaf
    pop     {r4, pc}
.Lw_case1:
    bl      deep
    pop     {r4, pc}
.Lw_case2:
    bl      mid
    pop     {r4, pc}
    .size sw_words, . - sw_words

    .type sw_bytes, %function
    .thumb_func
sw_bytes:
    push    {r7, lr}
    sub     sp, #8
    add     r0, pc
    ldrb    r0, [r0, #4]
    lsls    r0, r0, #1
.Lb_dispatch:
    add     pc, r0
.Lb_table:
    /* Halfwords from the `add pc`'s PC (its address + 4). */
    .byte   (.Lb_case0 - .Lb_dispatch - 4) / 2
    .byte   (.Lb_case1 - .Lb_dispatch - 4) / 2
    .byte   (.Lb_case2 - .Lb_dispatch - 4) / 2
    .byte   0
.Lb_case0:
    bl      mid
    b       .Lb_out
.Lb_case1:
    bl      deep
    b       .Lb_out
.Lb_case2:
    movs    r0, #0
.Lb_out:
    add     sp, #8
    pop     {r7, pc}
    .size sw_bytes, . - sw_bytes

    .balign 4
    .type sw_guarded, %function
    .thumb_func
sw_guarded:
    push    {r4, lr}
    cmp     r0, #1
    bhi     .Lg_default
    lsls    r0, r0, #2
    adr     r1, .Lg_table
    ldr     r0, [r1, r0]
    mov     pc, r0
.Lg_unreached:
    bl      deep
    pop     {r4, pc}
    .balign 4
.Lg_table:
    .word   .Lg_case0 + 1
    .word   .Lg_case1 + 1
    /* A literal pool word after the table: a code address of this function, not a case. */
    .word   .Lg_unreached + 1
.Lg_case0:
    bl      leaf
    pop     {r4, pc}
.Lg_case1:
    bl      mid
    pop     {r4, pc}
.Lg_default:
    movs    r0, #0
    pop     {r4, pc}
    .size sw_guarded, . - sw_guarded

    .type __gnu_thumb1_case_uqi, %function
    .thumb_func
__gnu_thumb1_case_uqi:
    push    {r1}
    mov     r1, lr
    lsrs    r1, r1, #1
    lsls    r1, r1, #1
    ldrb    r1, [r1, r0]
    lsls    r1, r1, #1
    add     lr, lr, r1
    pop     {r1}
    bx      lr
    .size __gnu_thumb1_case_uqi, . - __gnu_thumb1_case_uqi

    .type sw_gcc, %function
    .thumb_func
sw_gcc:
    push    {r4, lr}
    cmp     r0, #2
    bhi     .Lc_default
    bl      __gnu_thumb1_case_uqi
.Lc_table:
    .byte   (.Lc_case0 - .Lc_table) / 2
    .byte   (.Lc_case1 - .Lc_table) / 2
    .byte   (.Lc_case2 - .Lc_table) / 2
    .balign 2
.Lc_case0:
    bl      leaf
    pop     {r4, pc}
.Lc_case1:
    bl      deep
    pop     {r4, pc}
.Lc_case2:
    bl      mid
    pop     {r4, pc}
.Lc_default:
    movs    r0, #0
    pop     {r4, pc}
    .size sw_gcc, . - sw_gcc
