/*
 * main.c of the arenascope STM32CubeIDE recipe: the shape of CubeMX's main.c, with the agent's
 * lines in its USER CODE sections, where CubeMX keeps them across code regeneration.
 *
 * There is no HAL and no TFLM here: HAL_Init and SystemClock_Config are empty stand-ins, and the
 * arena is laid out by a fixed plan (app_publish_plan) where a TFLM application calls its
 * adapter after AllocateTensors (docs/integrating-tflm.md: TflmRecordingPlanner::Publish).
 *
 * The plan, in bytes from the arena's base (ARENA_BYTES = 16384):
 *   [0, 4096)        tensor 0, the model input, scopes 0..1
 *   [4096, 6144)     tensor 1, the model output, scopes 1..2
 *   [6144, 6656)     a scratch buffer of operator 0, scope 1
 *   head 6656, temp 6656: the free band [6656, 15360) is canary-filled
 *   [15360, 16384)   the persistent tail: TFLM's bookkeeping, immutable (checksummed)
 */
#include "main.h"

/* USER CODE BEGIN Includes */
#include <stddef.h>

#include "arenascope/agent.h"
#include "arenascope/fault.h"
/* USER CODE END Includes */

/* USER CODE BEGIN PV */
#define ARENA_BYTES 16384u
#define HEAD_BYTES 6656u
#define TAIL_OFFSET 15360u

/* The tensor arena, in .bss as in a TFLM application. */
static uint8_t tensor_arena[ARENA_BYTES] __attribute__((aligned(16)));
static arenascope_region_t arena_regions[4];
static uint32_t arena_checksums[4];
static arenascope_arena_t *arena;

/* The stack's bounds from STM32F405RGTX_FLASH.ld: [_sstack, _estack). */
extern uint32_t _sstack, _estack;

/* Set from the debugger to provoke a HardFault (an undefined instruction) after an inference. */
volatile uint32_t app_fault_request;
/* USER CODE END PV */

/* USER CODE BEGIN 0 */
static void app_publish_plan(void)
{
    static const arenascope_region_t plan[4] = {
        {0u, 4096u, 0u, ARENASCOPE_KIND_TENSOR, ARENASCOPE_REGION_MODEL_INPUT, 0, 1},
        {4096u, 2048u, 1u, ARENASCOPE_KIND_TENSOR, ARENASCOPE_REGION_MODEL_OUTPUT, 1, 2},
        {6144u, 512u, ARENASCOPE_ID_NONE, ARENASCOPE_KIND_SCRATCH, 0u, 1, 1},
        {TAIL_OFFSET, ARENA_BYTES - TAIL_OFFSET, ARENASCOPE_ID_NONE, ARENASCOPE_KIND_METADATA,
         ARENASCOPE_REGION_IMMUTABLE, ARENASCOPE_USE_NONE, ARENASCOPE_USE_NONE},
    };
    uint32_t i;

    arena = arenascope_arena_add(tensor_arena, ARENA_BYTES, 16u, arena_regions, 4u);
    for (i = 0; i < 4u; i++) {
        (void)arenascope_region_publish(arena, &plan[i]);
    }
    for (i = TAIL_OFFSET; i < ARENA_BYTES; i++) {
        tensor_arena[i] = (uint8_t)(i * 7u); /* what TFLM's allocator would have written there */
    }
    arenascope_arena_set_marks(arena, HEAD_BYTES, HEAD_BYTES, TAIL_OFFSET);
    arenascope_canary_fill(arena);
    (void)arenascope_fault_protect(arena, arena_checksums, 4u);
}

/* One "inference": operator 0 reads the input and writes the output, with a frame on the stack
 * as a kernel's locals would be. */
static void app_invoke(void)
{
    volatile uint8_t locals[256];
    uint32_t i;

    for (i = 0; i < sizeof locals; i++) {
        locals[i] = tensor_arena[i];
    }
    for (i = 0; i < 2048u; i++) {
        tensor_arena[4096u + i] = (uint8_t)(tensor_arena[i] + locals[i & 0xFFu]);
    }
}

__attribute__((noinline)) void app_inference_done(uint32_t count)
{
    __asm__ volatile("" ::"r"(count) : "memory"); /* a place for a breakpoint */
}
/* USER CODE END 0 */

int main(void)
{
    /* USER CODE BEGIN 1 */
    uint32_t count = 0;
    /* USER CODE END 1 */

    /* MCU Configuration: reset of all peripherals, initializes the flash interface and SysTick. */
    HAL_Init();
    SystemClock_Config();

    /* USER CODE BEGIN SysInit */
    /* The agent first: the stack as the startup painted it, and the fault record of this boot. */
    arenascope_init(&_sstack, &_estack, NULL, NULL);
    arenascope_fault_boot();
    /* USER CODE END SysInit */

    /* MX_GPIO_Init(); MX_..._Init(): CubeMX's peripheral initialisation goes here. */

    /* USER CODE BEGIN 2 */
    /* A TFLM application: interpreter.AllocateTensors(); then planner.Publish(...). */
    app_publish_plan();
    /* USER CODE END 2 */

    while (1) {
        /* USER CODE BEGIN 3 */
        arenascope_invoke_begin();
        app_invoke();
        arenascope_invoke_end();
        arenascope_measure();
        app_inference_done(++count);
        if (app_fault_request) {
            __asm__ volatile("udf #0"); /* UsageFault UNDEFINSTR, escalated to HardFault */
        }
        /* USER CODE END 3 */
    }
}

/* Stand-ins for the HAL (a real project: stm32f4xx_hal.c and CubeMX's SystemClock_Config). */
void HAL_Init(void) {}

void SystemClock_Config(void) {}
