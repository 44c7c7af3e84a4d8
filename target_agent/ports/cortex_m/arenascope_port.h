/*
 * arenascope Cortex-M port: calls that only make sense on the core itself.
 * Link arenascope_stack_paint.S from this folder into the firmware to get them.
 *
 * Also valid assembly (an .S file, or a .s file assembled through the C preprocessor as
 * STM32CubeIDE does with -x assembler-with-cpp): there it defines only the reset handler's
 * stack-paint line, ARENASCOPE_STACK_PAINT.
 */
#ifndef ARENASCOPE_PORT_CORTEX_M_H
#define ARENASCOPE_PORT_CORTEX_M_H

/* The reset handler's stack paint, one line: loads the stack's bounds (linker-script symbols:
 * low = the lowest word of the stack, high = one past the highest, the initial SP) into r0 and
 * r1 and calls arenascope_port_stack_paint, which clobbers r0-r2 and lr and pushes nothing.
 * Put it first in the reset handler, before anything uses the stack:
 *   assembly (CubeMX startup_*.s, after `ldr sp, =_estack`):  ARENASCOPE_STACK_PAINT(_sstack, _estack)
 *   C, inside a naked reset handler's asm:  ARENASCOPE_STACK_PAINT_ASM(__StackLimit, __StackTop)
 * The `ldr rN, =sym` forms need a literal pool within 4 KiB: the end of the section (assembly)
 * or a `.ltorg` after the handler's last instruction (C). `;` separates ARM assembler statements. */
#define ARENASCOPE_STACK_PAINT(low, high)                                                                              \
    ldr r0, = low;                                                                                                     \
    ldr r1, = high;                                                                                                    \
    bl arenascope_port_stack_paint
#define ARENASCOPE_PORT_STR_(...) #__VA_ARGS__
#define ARENASCOPE_PORT_STR(...) ARENASCOPE_PORT_STR_(__VA_ARGS__)
#define ARENASCOPE_STACK_PAINT_ASM(low, high) ARENASCOPE_PORT_STR(ARENASCOPE_STACK_PAINT(low, high)) "\n"

#ifndef __ASSEMBLER__

#ifdef __cplusplus
extern "C" {
#endif

#include <stdint.h>

/* Paints [low, high) (word-aligned) with ARENASCOPE_STACK_PAINT_PATTERN without using the
 * stack: call it first thing in the reset handler with the linker script's stack bounds
 * (CMSIS names: __StackLimit, __StackTop), through ARENASCOPE_STACK_PAINT above. */
void arenascope_port_stack_paint(uint32_t *low, uint32_t *high);

#ifdef __cplusplus
}
#endif

#endif /* __ASSEMBLER__ */
#endif /* ARENASCOPE_PORT_CORTEX_M_H */
