/*
 * Vectors and reset for the RTOS stand-in firmware (mps2-an386, mps2-an505): the main stack is
 * painted for the agent before C runs (arenascope_port_stack_paint), as in the demo; PendSV and
 * SysTick are the stand-in scheduler's.
 */
#include <stdint.h>

#include "arenascope_port.h"

extern uint32_t __StackTop, __StackLimit, __data_load, __data_start, __data_end, __bss_start, __bss_end;
int main(void);
void Reset_Handler(void);
void arenascope_fault_handler(void);
void standin_pendsv(void);
void rtos_systick(void);

static void Default_Handler(void)
{
    for (;;) {
        __asm__ volatile("wfi");
    }
}

/* clang-format off */
__attribute__((section(".isr_vector"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)&__StackTop, Reset_Handler, Default_Handler,
    arenascope_fault_handler, arenascope_fault_handler, arenascope_fault_handler, arenascope_fault_handler,
    arenascope_fault_handler, /* SecureFault on ARMv8-M */
    0, 0, 0, Default_Handler, Default_Handler, 0, standin_pendsv, rtos_systick,
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
    main();
    for (;;) {
    }
}

__attribute__((naked, noreturn)) void Reset_Handler(void)
{
    /* clang-format off */
    __asm__ volatile(ARENASCOPE_STACK_PAINT_ASM(__StackLimit, __StackTop)
                     "b   reset_c\n"
                     ".ltorg\n");
    /* clang-format on */
}
