/*
 * arenascope Cortex-M port: calls that only make sense on the core itself.
 * Link arenascope_stack_paint.S from this folder into the firmware to get them.
 */
#ifndef ARENASCOPE_PORT_CORTEX_M_H
#define ARENASCOPE_PORT_CORTEX_M_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdint.h>

/* Paints [low, high) (word-aligned) with ARENASCOPE_STACK_PAINT_PATTERN without using the
 * stack: call it first thing in the reset handler with the linker script's stack bounds
 * (CMSIS names: __StackLimit, __StackTop); see arenascope_stack_paint.S for the 3 lines. */
void arenascope_port_stack_paint(uint32_t *low, uint32_t *high);

#ifdef __cplusplus
}
#endif

#endif /* ARENASCOPE_PORT_CORTEX_M_H */
