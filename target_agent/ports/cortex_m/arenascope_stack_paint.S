/*
 * arenascope Cortex-M port: paint the whole main stack from the reset handler.
 *
 * void arenascope_port_stack_paint(uint32_t *low, uint32_t *high)
 *   Writes ARENASCOPE_STACK_PAINT_PATTERN over [low, high) one word at a time (both must be
 *   word-aligned). It uses r0-r2 only and pushes nothing, so it may be called first thing in
 *   the reset handler, before .data/.bss are set up and before any C code has put a frame on
 *   the stack it paints: the one line ARENASCOPE_STACK_PAINT(low, high) of arenascope_port.h.
 *   Thumb-1 instructions only: runs on ARMv6-M (M0/M0+) as well as ARMv7-M/ARMv8-M.
 */
#include "arenascope/agent.h"

    .syntax unified
    .thumb
    .section .text.arenascope_port_stack_paint, "ax", %progbits
    .global arenascope_port_stack_paint
    .type arenascope_port_stack_paint, %function
    .thumb_func
arenascope_port_stack_paint:
    ldr   r2, =ARENASCOPE_STACK_PAINT_PATTERN
    b     2f
1:  stmia r0!, {r2}
2:  cmp   r0, r1
    blo   1b
    bx    lr
    .pool
    .size arenascope_port_stack_paint, . - arenascope_port_stack_paint
