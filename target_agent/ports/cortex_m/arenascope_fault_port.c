/*
 * arenascope Cortex-M port: the fault handler entry.
 *
 * arenascope_fault_handler is a naked function: at exception entry it picks the stack the frame
 * was pushed on from EXC_RETURN bit 2 (0: MSP, 1: PSP; ARMv7-M ARM B1.5.6), and branches to C
 * with r0 = that SP (the stacked frame) and r1 = EXC_RETURN, before any C code can touch a
 * register. Point HardFault, MemManage, BusFault and UsageFault at it: in your vector table, or
 * with a CMSIS startup file (startup_<device>.s/.c, whose vectors are the weak names below) by
 * compiling this file with -DARENASCOPE_FAULT_HANDLER_NAMES: it then defines HardFault_Handler,
 * MemManage_Handler, BusFault_Handler and UsageFault_Handler (only HardFault_Handler on ARMv6-M
 * and ARMv8-M Baseline, which have no other fault exception) as strong aliases of
 * arenascope_fault_handler, which take the weak ones' place. No code, no bytes: four symbols.
 * From a static library, the linker pulls this object in only for an undefined symbol, never to
 * replace a weak one: link with -Wl,-u,arenascope_fault_handler (target_agent/CMakeLists.txt does
 * with -DARENASCOPE_FAULT_HANDLER_NAMES=ON), or link the object itself.
 * SCB addresses: ARMv7-M ARM B3.2.2 (SCS), FPCCR: Cortex-M4 TRM 4.6.
 *
 * Per architecture (the compiler's __ARM_ARCH_*__ macros):
 * - ARMv7-M and ARMv8-M Mainline (M3, M4, M7, M33, M55, M85): CFSR, HFSR, MMFAR, BFAR, SHCSR
 *   and ICSR are read; the entry uses an IT block. On ARMv8-M Mainline the entry first sets
 *   MSPLIM to 0 (arenascope_fault_stack_limit armed it), and arenascope_fault_stack_limit is there.
 * - ARMv6-M and ARMv8-M Baseline (M0, M0+, M1, M23): HardFault is the only fault exception and
 *   CFSR, HFSR, MMFAR, BFAR do not exist (ARMv6-M ARM B3.2.2, B1.5.9; ARMv8-M ARM D1.2.4); reading
 *   their reserved addresses may itself fault, inside the handler, and lock the core up, so they
 *   are recorded as 0 and only ICSR is read; SHCSR is left out too (ARMv6-M implements it only
 *   with the debug extension). The entry is Thumb-1: no IT, no TST with an immediate.
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

#if defined(__ARM_ARCH_6M__) || defined(__ARM_ARCH_8M_BASE__)
#define ARENASCOPE_PORT_BASELINE 1 /* HardFault only: no configurable fault status registers */
#else
#define ARENASCOPE_PORT_BASELINE 0
#endif
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
#define ARENASCOPE_PORT_STACK_LIMIT 1 /* MSPLIM (ARMv8-M ARM B3.22) */
#else
#define ARENASCOPE_PORT_STACK_LIMIT 0
#endif

void arenascope_port_fault_c(const uint32_t *frame, uint32_t exc_return);

__attribute__((used)) void arenascope_port_fault_c(const uint32_t *frame, uint32_t exc_return)
{
    arenascope_fault_regs_t regs;

#if ARENASCOPE_PORT_BASELINE
    regs.cfsr = 0;
    regs.hfsr = 0;
    regs.mmfar = 0;
    regs.bfar = 0;
    regs.shcsr = 0;
#else
    regs.cfsr = SCB_CFSR;
    regs.hfsr = SCB_HFSR;
    regs.mmfar = SCB_MMFAR;
    regs.bfar = SCB_BFAR;
    regs.shcsr = SCB_SHCSR;
#endif
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

int arenascope_fault_stack_limit(void)
{
#if ARENASCOPE_PORT_STACK_LIMIT
    const uint32_t limit = arenascope_descriptor.stack.low_addr;
    __asm__ volatile("msr msplim, %0" ::"r"(limit) : "memory");
    arenascope_descriptor.flags |= ARENASCOPE_FLAG_STACK_LIMIT;
    return 1;
#else
    return 0;
#endif
}

__attribute__((naked)) void arenascope_fault_handler(void)
{
#if ARENASCOPE_PORT_BASELINE
    /* Thumb-1: test EXC_RETURN bit 2 through a register; a register branch reaches anywhere. */
    __asm__ volatile("movs  r0, #4\n"
                     "mov   r1, lr\n"
                     "tst   r0, r1\n"
                     "bne   1f\n"
                     "mrs   r0, msp\n"
                     "b     2f\n"
                     "1:\n"
                     "mrs   r0, psp\n"
                     "2:\n"
                     "ldr   r2, =arenascope_port_fault_c\n"
                     "bx    r2\n"
                     ".ltorg\n");
#else
#if ARENASCOPE_PORT_STACK_LIMIT
    /* The handler's C runs on the main stack: lift its limit first, or a fault that is a stack
     * overflow (STKOF, the entry stacking stopped at the limit) would fault again in here. */
    __asm__ volatile("movs  r0, #0\n"
                     "msr   msplim, r0\n");
#endif
    __asm__ volatile("tst   lr, #4\n"
                     "ite   eq\n"
                     "mrseq r0, msp\n"
                     "mrsne r0, psp\n"
                     "mov   r1, lr\n"
                     "b     arenascope_port_fault_c\n");
#endif
}

#ifdef ARENASCOPE_FAULT_HANDLER_NAMES
/* The CMSIS names (CMSIS-Core startup files, e.g. Device/ARM/ARMCM4/Source/startup_ARMCM4.c). */
void HardFault_Handler(void) __attribute__((alias("arenascope_fault_handler")));
#if !ARENASCOPE_PORT_BASELINE
void MemManage_Handler(void) __attribute__((alias("arenascope_fault_handler")));
void BusFault_Handler(void) __attribute__((alias("arenascope_fault_handler")));
void UsageFault_Handler(void) __attribute__((alias("arenascope_fault_handler")));
#endif
#endif
