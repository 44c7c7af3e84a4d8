/*
 * arenascope RISC-V port: paint the whole main stack from the reset code.
 *
 * void arenascope_port_stack_paint(uint32_t *low, uint32_t *high)
 *   Writes ARENASCOPE_STACK_PAINT_PATTERN over [low, high) one word at a time (both must be
 *   word-aligned). It uses a0, a1 and t0 only and pushes nothing, so it may be called first thing
 *   in the reset code, before .data/.bss are set up: ARENASCOPE_STACK_PAINT(low, high) of
 *   arenascope_port.h. RV32I instructions only (RV32E: a0, a1 and t0 exist there too).
 */
#include "arenascope/agent.h"

    .section .text.arenascope_port_stack_paint, "ax", @progbits
    .global arenascope_port_stack_paint
    .type arenascope_port_stack_paint, @function
    .balign 4
arenascope_port_stack_paint:
    li    t0, ARENASCOPE_STACK_PAINT_PATTERN
    j     2f
1:  sw    t0, 0(a0)
    addi  a0, a0, 4
2:  bltu  a0, a1, 1b
    ret
    .size arenascope_port_stack_paint, . - arenascope_port_stack_paint
