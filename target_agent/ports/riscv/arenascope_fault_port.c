/*
 * arenascope RISC-V port: the trap entry (RV32, machine mode).
 *
 * arenascope_fault_handler (arenascope_port.h) is naked and 4-byte aligned, for mtvec in direct
 * mode. Before any C runs it stores ra, sp and a0-a4 in a save area of its own through t0 (whose
 * value it parks in mscratch, restoring nothing: it never returns), then runs the C part on a
 * 256-byte stack of its own, since the trap may be the stack's own (an overflow into a PMP guard,
 * a corrupted sp). The C part reads mcause, mepc, mtval, mstatus and mtvec (RISC-V Privileged
 * Architecture 1.12, 3.1.6-3.1.16) into the record (fault.h: arch ARENASCOPE_FAULT_ARCH_RISCV)
 * and calls arenascope_fault_hook.
 * The CSR instructions need Zicsr, which GCC 12's -march=rv32imac does not imply: `.option arch,
 * +zicsr` around them.
 */
#include <stdint.h>

#include "arenascope/fault.h"
#include "arenascope_port.h"

#ifndef ARENASCOPE_TRAP_STACK_BYTES
#define ARENASCOPE_TRAP_STACK_BYTES 256
#endif
/* The PMP stack guard's size (arenascope_fault_stack_limit): a power of two, at least 8. */
#ifndef ARENASCOPE_PMP_GUARD_BYTES
#define ARENASCOPE_PMP_GUARD_BYTES 32u
#endif

/* ra, sp, a0, a1, a2, a3, a4 as the trap left them (the entry writes them, the C part reads). */
uint32_t arenascope_trap_saved[7];
__attribute__((aligned(16))) uint8_t arenascope_trap_stack[ARENASCOPE_TRAP_STACK_BYTES];

#define CSR_READ(name, out)                                                                                            \
    __asm__ volatile(".option push\n.option arch, +zicsr\ncsrr %0, " #name "\n.option pop" : "=r"(out))
#define CSR_WRITE(name, in)                                                                                            \
    __asm__ volatile(".option push\n.option arch, +zicsr\ncsrw " #name ", %0\n.option pop" ::"r"(in) : "memory")

int arenascope_fault_stack_limit(void)
{
    /* PMP entry 0, NAPOT over the stack's lowest ARENASCOPE_PMP_GUARD_BYTES, locked (L: it binds
     * machine mode too) with no R, W or X: pmpcfg 0x98 (L bit 7, A = NAPOT 3 in bits 4:3), pmpaddr
     * = (base >> 2) | (size / 8 - 1) (Privileged Architecture 1.12, 3.7.1). Only when entry 0 is
     * unused (pmpcfg0's low byte 0) and the stack's low bound is aligned to the size. */
    const uint32_t low = (uint32_t)arenascope_descriptor.stack.low_addr;
    const uint32_t size = ARENASCOPE_PMP_GUARD_BYTES;
    uint32_t cfg;

    CSR_READ(pmpcfg0, cfg);
    if ((cfg & 0xFFu) != 0u || low == 0u || (low & (size - 1u)) != 0u ||
        low + size > (uint32_t)arenascope_descriptor.stack.high_addr) {
        return 0;
    }
    CSR_WRITE(pmpaddr0, (low >> 2) | (size / 8u - 1u));
    CSR_WRITE(pmpcfg0, cfg | 0x98u);
    arenascope_descriptor.flags |= ARENASCOPE_FLAG_STACK_LIMIT;
    return 1;
}

void arenascope_port_fault_c(void);

__attribute__((used, noreturn)) void arenascope_port_fault_c(void)
{
    uint32_t status[7], frame[8], mepc;
    const uint32_t *saved = arenascope_trap_saved;

    CSR_READ(mstatus, status[0]);
    CSR_READ(mcause, status[1]);
    status[2] = 0;
    CSR_READ(mtval, status[3]);
    CSR_READ(mepc, mepc);
    status[4] = mepc;
    CSR_READ(mtvec, status[5]);
    status[6] = 0;
    frame[0] = mepc;
    frame[1] = saved[0]; /* ra */
    frame[2] = saved[1]; /* sp */
    frame[3] = saved[2]; /* a0 */
    frame[4] = saved[3];
    frame[5] = saved[4];
    frame[6] = saved[5];
    frame[7] = saved[6]; /* a4 */
    arenascope_fault_capture_words(ARENASCOPE_FAULT_ARCH_RISCV, saved[1], status, frame);
    arenascope_fault_hook(&arenascope_fault_record);
    for (;;) {
        __asm__ volatile("wfi");
    }
}

__attribute__((naked, aligned(4))) void arenascope_fault_handler(void)
{
    __asm__ volatile(".option push\n.option arch, +zicsr\n"
                     "csrw  mscratch, t0\n"
                     ".option pop\n"
                     "la    t0, arenascope_trap_saved\n"
                     "sw    ra, 0(t0)\n"
                     "sw    sp, 4(t0)\n"
                     "sw    a0, 8(t0)\n"
                     "sw    a1, 12(t0)\n"
                     "sw    a2, 16(t0)\n"
                     "sw    a3, 20(t0)\n"
                     "sw    a4, 24(t0)\n"
                     "la    sp, arenascope_trap_stack + %0\n"
                     "j     arenascope_port_fault_c\n" ::"i"(ARENASCOPE_TRAP_STACK_BYTES));
}
