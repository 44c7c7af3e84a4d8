/*
 * main.h of the arenascope STM32CubeIDE recipe. A CubeMX project's main.h includes the HAL
 * (stm32f4xx_hal.h); this recipe has no HAL: the two calls main() makes are stand-ins in main.c.
 */
#ifndef MAIN_H
#define MAIN_H

#include <stdint.h>

void HAL_Init(void);
void SystemClock_Config(void);

/* USER CODE BEGIN EFP */
/* The application's inference loop, as the recipe's test sees it (a breakpoint after each). */
void app_inference_done(uint32_t count);
/* USER CODE END EFP */

#endif /* MAIN_H */
