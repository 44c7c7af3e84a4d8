/*
 * A minimal ARMv6-M firmware for QEMU's microbit (nRF51822, Cortex-M0): the arenascope agent and
 * its fault port, then a word load from an odd address, which ARMv6-M always faults (it has no
 * unaligned access; ARMv6-M ARM A3.2.1) with a HardFault, its only fault exception. (QEMU's nRF51
 * answers every unmapped address with 0, so a load from nowhere does not fault there.) tests/integration/test_fault_cores.py builds it with
 * arm-none-eabi-gcc -mcpu=cortex-m0 and reads the fault with `arena fault` under gdb-multiarch.
 * Memory (nRF51 reference manual, and QEMU hw/arm/nrf51_soc.c): flash at 0, RAM at 0x20000000.
 */
#include <stdint.h>

#include "arenascope/agent.h"
#include "arenascope/fault.h"

extern uint32_t __StackLimit, __StackTop, __guard_start, __guard_end, __data_load, __data_start, __data_end,
    __bss_start, __bss_end;
void Reset_Handler(void);
void arenascope_fault_handler(void); /* ports/cortex_m/arenascope_fault_port.c */
int main(void);

#ifndef FAULT_SCENARIO
#define FAULT_SCENARIO 0
#endif

/* The instruction that faults is this function's first. */
__attribute__((noinline, used)) uint32_t fault_here(volatile uint32_t *where)
{
#if FAULT_SCENARIO == 0
    return *where; /* where = 0x20000001 */
#elif FAULT_SCENARIO == 1
    (void)where;
    __asm__ volatile("udf #0");
    return 0;
#elif FAULT_SCENARIO == 2
    *where = 0x5a5a5a5au; /* where = 0xF0000000 */
    return 0;
#else
    volatile uint32_t frame[8];
    frame[0] = (uint32_t)(uintptr_t)where;
    /* Deeper until the stack runs out (each call 40 B or so); the test never returns. */
    return frame[0] ? fault_here(where) + frame[0] : 0;
#endif
}

__attribute__((used)) volatile uint32_t result;

int main(void)
{
    arenascope_init(&__StackLimit, &__StackTop, &__guard_start, &__guard_end);
    arenascope_fault_boot();
#if FAULT_SCENARIO == 3
    if (!arenascope_fault_stack_limit()) {
        for (;;) {
        }
    }
#endif
    result = fault_here((volatile uint32_t *)(uintptr_t)(FAULT_SCENARIO == 0 ? 0x20000001u : 0xF0000000u));
    for (;;) {
    }
}

void Reset_Handler(void)
{
    uint32_t *src = &__data_load, *dst = &__data_start;
    while (dst < &__data_end) *dst++ = *src++;
    for (dst = &__bss_start; dst < &__bss_end;) *dst++ = 0;
    main();
}

static void Default_Handler(void)
{
    for (;;) {
    }
}

/* clang-format off */
__attribute__((section(".isr_vector"), used)) static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)&__StackTop,
    Reset_Handler,
    Default_Handler,           /* NMI */
    arenascope_fault_handler,  /* HardFault: the only fault on ARMv6-M */
    0, 0, 0, 0, 0, 0, 0,
    Default_Handler,           /* SVCall */
    0, 0,
    Default_Handler,           /* PendSV */
    Default_Handler,           /* SysTick */
};
/* clang-format on */
