/*
 * arenascope RISC-V port (RV32, machine mode): calls that only make sense on the core itself.
 * Link arenascope_stack_paint.S from this folder into the firmware for the stack paint, and
 * arenascope_fault_port.c (the arenascope_fault library) for the trap capture.
 *
 * Also valid assembly (an .S file): there it defines only the reset code's stack-paint line,
 * ARENASCOPE_STACK_PAINT.
 */
#ifndef ARENASCOPE_PORT_RISCV_H
#define ARENASCOPE_PORT_RISCV_H

/* The reset code's stack paint, one line: loads the stack's bounds (linker-script symbols: low =
 * the lowest word of the stack, high = one past the highest, the initial SP) into a0 and a1 and
 * calls arenascope_port_stack_paint, which clobbers a0, a1, t0 and ra and pushes nothing. Put it
 * first in your _start, before anything uses the stack (picolibc's crt0 cannot take it: paint
 * from main with arenascope_port_stack_paint_below_sp instead):
 *   ARENASCOPE_STACK_PAINT(__stack_low, __stack)   (`;` separates RISC-V assembler statements) */
#define ARENASCOPE_STACK_PAINT(low, high)                                                                              \
    la a0, low;                                                                                                        \
    la a1, high;                                                                                                       \
    call arenascope_port_stack_paint

#ifndef __ASSEMBLER__

#ifdef __cplusplus
extern "C" {
#endif

#include <stdint.h>

/* Paints [low, high) (word-aligned) with ARENASCOPE_STACK_PAINT_PATTERN without using the
 * stack: call it first thing in the reset code, through ARENASCOPE_STACK_PAINT above. */
void arenascope_port_stack_paint(uint32_t *low, uint32_t *high);

/* Paints the stack recorded by arenascope_init (descriptor stack.low_addr) up to
 * ARENASCOPE_STACK_PAINT_MARGIN bytes below the caller's SP, for a stack already in use (picolibc's
 * crt0 has run main on it). Call from main, after arenascope_init. */
void arenascope_port_stack_paint_below_sp(void);

/* The trap entry: point mtvec at it (direct mode; it is 4-byte aligned), or jump to it from your
 * own handler's first instruction with every register as the trap left it. It saves ra, sp and
 * a0-a4 without the stack (which may be what failed), moves to a 256-byte stack of its own, records
 * the trap CSRs (mcause, mepc, mtval, mstatus, mtvec) in arenascope_fault_record (fault.h: arch
 * ARENASCOPE_FAULT_ARCH_RISCV), then calls arenascope_fault_hook (weak: it sleeps, wfi) and never
 * returns. An interrupt, ecall or ebreak reaching it is recorded the same way: route only
 * exceptions to it when the firmware takes interrupts. */
void arenascope_fault_handler(void);

/* The RISC-V stack limit: locks PMP entry 0 over the stack's lowest ARENASCOPE_PMP_GUARD_BYTES
 * (default 32) with no access, so that a stack grown that far faults at once (a store or load
 * access fault, mtval in the guard) instead of running into an arena below it, and sets the
 * descriptor's ARENASCOPE_FLAG_STACK_LIMIT so that `arena fault` says so. Locked: until reset.
 * Call after arenascope_init and after painting the stack (the guard is its bottom). Returns 1
 * when set, 0 when entry 0 is in use or the stack's low bound is not aligned to the guard's size.
 * Declared in arenascope/fault.h too (arenascope_fault_stack_limit). */

#ifdef __cplusplus
}
#endif

#endif /* __ASSEMBLER__ */
#endif /* ARENASCOPE_PORT_RISCV_H */
