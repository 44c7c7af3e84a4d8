/* The outside firmware's startup (STM32F405, Cortex-M4F): vector table, a reset handler that
 * paints the stack with the agent's port (arenascope_port.h) before entering C, and the fault
 * vectors on the agent's fault capture (arenascope::fault). */
#include <stdint.h>

#include "arenascope_port.h"

extern uint32_t __StackTop, __data_load, __data_start, __data_end, __bss_start, __bss_end;
int main(void);
void Reset_Handler(void);
void arenascope_fault_handler(void);

__attribute__((noreturn, used)) static void reset_c(void)
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
    __asm__ volatile("ldr r0, =__StackLimit\n"
                     "ldr r1, =__StackTop\n"
                     "bl  arenascope_port_stack_paint\n"
                     "b   reset_c\n"
                     ".ltorg\n");
}

__attribute__((section(".isr_vector"), used)) static void (*const vectors[7])(void) = {
    (void (*)(void))(uintptr_t)&__StackTop,
    Reset_Handler,
    arenascope_fault_handler,
    arenascope_fault_handler,
    arenascope_fault_handler,
    arenascope_fault_handler,
    arenascope_fault_handler,
};
