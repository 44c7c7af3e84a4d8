/*
 * NOT TensorFlow Lite Micro. Part of the TFLM STAND-IN: a firmware with TFLM 90b983c2's class and
 * member names for what arenascope's agentless mode reads, so that its post-mortem is tested in
 * CI where real TFLM cannot be built; it lays out the arena by re-enacting the allocation steps
 * arenascope-plan predicts.
 *
 * Startup for QEMU mps2-an386: the vector table, the reset handler (paints the stack 0xCCCCCCCC
 * from __StackLimit up, copies .data, zeroes .bss, enables the FPU) and the fault handlers.
 * No configurable fault handler is enabled (SHCSR stays 0): MemManage, BusFault and UsageFault
 * escalate to HardFault. HardFault_Handler is CubeMX's `while (1) {}`; scenario 4 switches VTOR
 * to standin_vectors_saving_sp, whose HardFault handler stores the active SP in g_fault_sp first.
 */
#include <stdint.h>

#include "arenascope_port.h"

extern "C" {
extern uint32_t __StackTop, __StackLimit;
extern uint32_t __data_load, __data_start, __data_end, __bss_start, __bss_end;
extern volatile uint32_t g_fault_sp;
int main(void);
void Reset_Handler(void);

__attribute__((noinline, used)) void HardFault_Handler(void)
{
    while (1) {
    }
}
__attribute__((noinline, used)) void Default_Handler(void)
{
    while (1) {
    }
}
// Scenario 4's HardFault handler: the SP the exception frame was stacked at (MSP or PSP, by
// EXC_RETURN bit 2) into g_fault_sp, then the endless loop.
__attribute__((naked, used)) void HardFault_Handler_SavingSp(void)
{
    __asm__ volatile("tst lr, #4\n"
                     "ite eq\n"
                     "mrseq r0, msp\n"
                     "mrsne r0, psp\n"
                     "ldr r1, =g_fault_sp\n"
                     "str r0, [r1]\n"
                     "standin_fault_loop: b standin_fault_loop\n"
                     ".ltorg\n");
}

#define STANDIN_VECTORS(hardfault)                                                                                     \
    (void (*)(void))(uintptr_t) & __StackTop, Reset_Handler, Default_Handler, hardfault, Default_Handler,              \
        Default_Handler, Default_Handler, 0, 0, 0, 0, Default_Handler, Default_Handler, 0, Default_Handler,            \
        Default_Handler

extern void (*const standin_vectors[16])(void);
__attribute__((section(".isr_vector"), used)) void (*const standin_vectors[16])(void) = {
    STANDIN_VECTORS(HardFault_Handler)};
// VTOR needs 128-byte alignment for 16..32 vectors (ARMv7-M ARM B3.2.5).
extern void (*const standin_vectors_saving_sp[16])(void);
__attribute__((aligned(128), used)) void (*const standin_vectors_saving_sp[16])(void) = {
    STANDIN_VECTORS(HardFault_Handler_SavingSp)};

__attribute__((noreturn, used)) void standin_reset_c(void)
{
    uint32_t *src = &__data_load, *dst;
    for (dst = &__data_start; dst < &__data_end;) *dst++ = *src++;
    for (dst = &__bss_start; dst < &__bss_end;) *dst++ = 0u;
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;  // CPACR: CP10/CP11 full access (B3.2.20)
    __asm__ volatile("dsb\n isb");
    main();
    while (1) {
    }
}

// Paints the whole stack 0xCCCCCCCC before anything uses it (naked: nothing pushed yet), with the
// agent port's painter alone (arenascope_stack_paint.S: no descriptor, the firmware stays agentless).
__attribute__((naked, noreturn)) void Reset_Handler(void)
{
    // clang-format off
    __asm__ volatile(ARENASCOPE_STACK_PAINT_ASM(__StackLimit, __StackTop)
                     "b standin_reset_c\n"
                     ".ltorg\n");
    // clang-format on
}
}
