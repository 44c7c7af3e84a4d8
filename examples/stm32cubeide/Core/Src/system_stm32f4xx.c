/*
 * system_stm32f4xx.c of the arenascope STM32CubeIDE recipe: SystemInit, which the startup calls
 * before .data and .bss are set up. CubeMX's version also resets the RCC clock configuration;
 * this one only enables the FPU, which the -mfloat-abi=hard code needs (ARMv7-M ARM B3.2.20,
 * CPACR: full access to CP10 and CP11).
 */
#include <stdint.h>

uint32_t SystemCoreClock = 16000000u; /* HSI, the reset clock */

void SystemInit(void)
{
#if defined(__ARM_FP)
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20; /* SCB->CPACR: CP10, CP11 full access */
    __asm__ volatile("dsb\n isb");
#endif
}
