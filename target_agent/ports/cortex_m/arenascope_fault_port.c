/*
 * arenascope Cortex-M port: the fault handler entry.
 *
 * arenascope_fault_handler is a naked function: at exception entry it picks the stack the frame
 * was pushed on from EXC_RETURN bit 2 (0: MSP, 1: PSP; ARMv7-M ARM B1.5.6), and branches to C
 * with r0 = that SP (the stacked frame) and r1 = EXC_RETURN, before any C code can touch a
 * register. Point HardFault, MemManage, BusFault and UsageFault at it (the vector table, or
 * `#define ARENASCOPE_FAULT_HANDLER_NAMES` to define those four names here).
 * SCB addresses: ARMv7-M ARM B3.2.2 (SCS), FPCCR: Cortex-M4 TRM 4.6.
 */
#include <stdint.h>

#include "arenascope/fault.h"

#define SCB_ICSR (*(volatile uint32_t *)0xE000ED04u)
#define SCB_SHCSR (*(volatile uint32_t *)0xE000ED24u)
#define SCB_CFSR (*(volatile uint32_t *)0xE000ED28u)
#define SCB_HFSR (*(volatile uint32_t *)0xE000ED2Cu)
#define SCB_MMFAR (*(volatile uint32_t *)0xE000ED34u)
#define SCB_BFAR (*(volatile uint32_t *)0xE000ED38u)
#define FPU_FPCCR (*(volatile uint32_t *)0xE000EF34u)

void arenascope_port_fault_c(const uint32_t *frame, uint32_t exc_return);

__attribute__((used)) void arenascope_port_fault_c(const uint32_t *frame, uint32_t exc_return)
{
    arenascope_fault_regs_t regs;

    regs.cfsr = SCB_CFSR;
    regs.hfsr = SCB_HFSR;
    regs.mmfar = SCB_MMFAR;
    regs.bfar = SCB_BFAR;
    regs.shcsr = SCB_SHCSR;
    regs.icsr = SCB_ICSR;
#if defined(__ARM_FP)
    regs.fpccr = FPU_FPCCR;
#else
    regs.fpccr = 0;
#endif
    arenascope_fault_capture(frame, exc_return, &regs);
    arenascope_fault_hook(&arenascope_fault_record);
    for (;;) {
        __asm__ volatile("wfi");
    }
}

__attribute__((naked)) void arenascope_fault_handler(void)
{
    __asm__ volatile("tst   lr, #4\n"
                     "ite   eq\n"
                     "mrseq r0, msp\n"
                     "mrsne r0, psp\n"
                     "mov   r1, lr\n"
                     "b     arenascope_port_fault_c\n");
}
