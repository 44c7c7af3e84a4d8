/*
 * The demo's TFLM-shaped workload (examples/demo/workload.c) in a task of arenascope's FreeRTOS
 * stand-in (standin_rtos.h: not FreeRTOS) on QEMU mps2-an386 (Cortex-M4) or mps2-an505 (Cortex-M33,
 * Secure): the arena sits right below the inference task's stack, with the guard band between,
 * as production firmware has it when the task's stack is a static array placed after the arena.
 * tests/integration/test_rtos_tasks.py builds it with arm-none-eabi-gcc and reads it with
 * gdb-multiarch. Tasks, as `arena stack` should list them at rtos_checkpoint:
 *   infer   priority 2, 2 KiB static stack right above the guard band, running
 *   comms   priority 1, 1 KiB static stack, blocked (delayed) between bursts of recursion
 *   logger  priority 1, 512 B stack from the stand-in's heap (heap_4's header), suspended
 *   idle    priority 0, 256 B static stack, ready
 * Scenario 1 (`set var demo_scenario = 1`, as in the demo): the inference task recurses down
 * through the guard band into the arena's persistent tail; the next invoke calls through the
 * overwritten operator table and faults, on the task's stack (PSP). On ARMv8-M the stand-in's
 * PSPLIM stops the recursion at pxStack instead (UsageFault STKOF).
 */
#include <stdint.h>

#include "arenascope/agent.h"
#include "arenascope/fault.h"
#include "standin_rtos.h"
#include "workload.h"

#define REG(addr) (*(volatile uint32_t *)(addr))
#define SCB_SHCSR REG(0xE000ED24u)
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)

extern uint32_t __StackLimit, __StackTop, __guard_start, __guard_end;

__attribute__((section(".tensor_arena"), aligned(16))) uint8_t tensor_arena[DEMO_ARENA_BYTES];
__attribute__((section(".stack_guard"), aligned(4))) uint8_t stack_guard[DEMO_GUARD_BYTES];
uint8_t *const demo_arena = tensor_arena;

/* The inference task's stack follows the guard band (the linker script asserts it). */
__attribute__((section(".infer_stack"), aligned(8))) StackType_t infer_stack[512];
StackType_t comms_stack[256] __attribute__((aligned(8)));
StackType_t idle_stack[64] __attribute__((aligned(8)));
TCB_t infer_tcb, comms_tcb, logger_tcb, idle_tcb;

void arenascope_fault_hook(const arenascope_fault_record_t *record)
{
    (void)record;
    for (;;) {
        __asm__ volatile("wfi");
    }
}

/* Empty, never inlined: where the tests stop, in the inference task after each invoke. */
__attribute__((noinline, used)) void rtos_checkpoint(uint32_t invokes)
{
    __asm__ volatile("" ::"r"(invokes) : "memory");
}

static __attribute__((noinline)) uint32_t burst(uint32_t depth)
{
    volatile uint32_t frame[8];
    frame[0] = depth;
    return depth ? burst(depth - 1u) + frame[0] : 0u;
}

static void infer_task(void)
{
    uint32_t invokes = 0;
    for (;;) {
        demo_invoke();
        arenascope_measure();
        rtos_checkpoint(++invokes);
        if (demo_scenario == DEMO_STACK_INTO_ARENA) {
            SYST_CSR = 5u; /* no tick frames while it recurses: the same damage every run (the demo's reason) */
            demo_run_scenario(DEMO_STACK_INTO_ARENA);
            SYST_CSR = 7u;
        }
        standin_delay(2);
    }
}

static void comms_task(void)
{
    for (;;) {
        (void)burst(12); /* about 12 x 48 B of stack */
        standin_delay(1);
    }
}

static void logger_task(void)
{
    (void)burst(3);
    standin_suspend_self();
}

static void idle_task(void)
{
    for (;;) {
        __asm__ volatile("wfi");
    }
}

void rtos_systick(void)
{
    standin_tick();
}

int main(void)
{
    arenascope_init(&__StackLimit, &__StackTop, &__guard_start, &__guard_end);
    arenascope_fault_boot();
    SCB_SHCSR |= 7u << 16; /* MemManage, BusFault, UsageFault handlers on */
    demo_allocate();
    standin_task_create(&infer_tcb, "infer", 2, infer_stack, 512, infer_task);
    standin_task_create(&comms_tcb, "comms", 1, comms_stack, 256, comms_task);
    standin_task_create(&logger_tcb, "logger", 1, standin_stack_alloc(128), 128, logger_task);
    standin_task_create(&idle_tcb, "idle", 0, idle_stack, 64, idle_task);
    SYST_RVR = 25000u - 1u; /* 1 ms at 25 MHz */
    SYST_CVR = 0u;
    SYST_CSR = 7u;
    standin_start();
}
