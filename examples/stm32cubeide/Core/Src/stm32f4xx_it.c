/*
 * stm32f4xx_it.c of the arenascope STM32CubeIDE recipe: the interrupt handlers CubeMX generates.
 *
 * arenascope: CubeMX also generates HardFault_Handler, MemManage_Handler, BusFault_Handler and
 * UsageFault_Handler here, each a `while (1) {}`. Those strong definitions would win over the
 * startup's weak ones that branch to the agent's fault capture, so they are not generated: in
 * CubeMX, System Core > NVIC > Code generation, untick "Generate IRQ handler" for Hard fault,
 * Memory management fault, Pre-fetch fault/memory access fault and Undefined instruction
 * (or delete the four functions from this file). See ../../README.md.
 */
#include "main.h"

void NMI_Handler(void)
{
    while (1) {
    }
}

void SVC_Handler(void) {}

void DebugMon_Handler(void) {}

void PendSV_Handler(void) {}

/* CubeMX: HAL_IncTick(). The recipe configures no SysTick, so this never runs. */
void SysTick_Handler(void) {}
