/*
 * Startup for the arenascope demo on mps2-an386: vector table, reset handler, fault handlers.
 * No vendor SDK: register addresses are from the ARMv7-M Architecture Reference Manual (B3.2,
 * System Control Space) and the MPS2 AN386 memory map.
 */
#include <stdint.h>
#include <string.h>

#include "arenascope_port.h"

extern uint32_t __StackTop, __StackLimit;
extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end;

int main(void);
void Reset_Handler(void);
void demo_systick_isr(void);

/* Fault handlers: each fault vector has its own name (a breakpoint there stops at exception entry,
 * LR = EXC_RETURN) and branches, touching no register, to the agent's fault capture, which records
 * the fault and sleeps in arenascope_fault_hook, so a faulted guest does not spin a host core. */
void arenascope_fault_handler(void);
#define DEMO_FAULT_HANDLER(name)                                                                                       \
    __attribute__((naked, used)) void name(void)                                                                       \
    {                                                                                                                  \
        __asm__ volatile("b arenascope_fault_handler");                                                                \
    }
DEMO_FAULT_HANDLER(HardFault_Handler)
DEMO_FAULT_HANDLER(MemManage_Handler)
DEMO_FAULT_HANDLER(BusFault_Handler)
DEMO_FAULT_HANDLER(UsageFault_Handler)

__attribute__((noinline, used)) void Default_Handler(void)
{
    for (;;) {
        __asm__ volatile("wfi");
    }
}
__attribute__((noinline, used)) void NMI_Handler(void)
{
    for (;;) {
        __asm__ volatile("wfi");
    }
}

/* The vector table, laid out by hand. */
/* clang-format off */
__attribute__((section(".isr_vector"), used)) static void (*const vectors[16 + 32])(void) = {
    (void (*)(void))(uintptr_t)&__StackTop,
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    MemManage_Handler,
    BusFault_Handler,
    UsageFault_Handler,
    0, 0, 0, 0,
    Default_Handler, /* SVCall */
    Default_Handler, /* DebugMonitor */
    0,
    Default_Handler, /* PendSV */
    demo_systick_isr,
    /* 32 external interrupts, none used */
    Default_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler, Default_Handler,
    Default_Handler, Default_Handler,
};
/* clang-format on */

static __attribute__((noreturn, used)) void reset_c(void)
{
    uint32_t *src = &__data_load, *dst;

    for (dst = &__data_start; dst < &__data_end;) {
        *dst++ = *src++;
    }
    for (dst = &__bss_start; dst < &__bss_end;) {
        *dst++ = 0u;
    }
    /* CPACR: full access to CP10/CP11 (the FPU), ARMv7-M ARM B3.2.20. */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm__ volatile("dsb\n isb");
    main();
    for (;;) {
        __asm__ volatile("wfi");
    }
}

/* Paints the whole stack before anything has used it, then enters C. Naked: no prologue, so
 * nothing is pushed onto the stack being painted. */
__attribute__((naked, noreturn)) void Reset_Handler(void)
{
    /* clang-format off */
    __asm__ volatile(ARENASCOPE_STACK_PAINT_ASM(__StackLimit, __StackTop)
                     "b   reset_c\n"
                     ".ltorg\n");
    /* clang-format on */
}
