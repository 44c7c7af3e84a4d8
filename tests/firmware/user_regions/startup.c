/*
 * A CMSIS-style startup (as CMSIS-Core's Device/ARM/ARMCM4/Source/startup_ARMCM4.c lays it out):
 * every handler is a weak alias of Default_Handler and the vector table uses the CMSIS names.
 * Nothing here names arenascope: the fault handlers come from the agent's fault port compiled
 * with -DARENASCOPE_FAULT_HANDLER_NAMES, whose strong aliases replace the weak ones. If they did
 * not, a fault would spin in Default_Handler and the test's breakpoint on arenascope_fault_hook
 * would never be hit.
 */
#include <stdint.h>

extern uint32_t __StackLimit, __StackTop, __data_load, __data_start, __data_end, __bss_start, __bss_end;
int main(void);
void Reset_Handler(void);
void Default_Handler(void);
void reset_c(void);

void NMI_Handler(void) __attribute__((weak, alias("Default_Handler")));
void HardFault_Handler(void) __attribute__((weak, alias("Default_Handler")));
#if !defined(__ARM_ARCH_6M__) && !defined(__ARM_ARCH_8M_BASE__)
void MemManage_Handler(void) __attribute__((weak, alias("Default_Handler")));
void BusFault_Handler(void) __attribute__((weak, alias("Default_Handler")));
void UsageFault_Handler(void) __attribute__((weak, alias("Default_Handler")));
#define FAULT_VECTORS MemManage_Handler, BusFault_Handler, UsageFault_Handler
#else
#define FAULT_VECTORS 0, 0, 0 /* ARMv6-M: HardFault is the only fault exception */
#endif
void SVC_Handler(void) __attribute__((weak, alias("Default_Handler")));
void PendSV_Handler(void) __attribute__((weak, alias("Default_Handler")));
void SysTick_Handler(void) __attribute__((weak, alias("Default_Handler")));

__attribute__((used)) void Default_Handler(void)
{
    for (;;) {
    }
}

/* clang-format off */
__attribute__((section(".isr_vector"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)&__StackTop,
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    FAULT_VECTORS,
    0, 0, 0, 0,
    SVC_Handler,
    0, 0,
    PendSV_Handler,
    SysTick_Handler,
};
/* clang-format on */

__attribute__((used)) void reset_c(void)
{
    uint32_t *src = &__data_load, *dst = &__data_start;
    while (dst < &__data_end) *dst++ = *src++;
    for (dst = &__bss_start; dst < &__bss_end;) *dst++ = 0;
    main();
    for (;;) {
    }
}

/* Paints the stack before anything uses it (naked: nothing is pushed on it), then enters C. */
__attribute__((naked)) void Reset_Handler(void)
{
    __asm__ volatile("ldr r0, =__StackLimit\n"
                     "ldr r1, =__StackTop\n"
                     "bl  arenascope_port_stack_paint\n"
                     "ldr r0, =reset_c\n"
                     "bx  r0\n"
                     ".ltorg\n");
}
