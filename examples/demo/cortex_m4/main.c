/*
 * arenascope demo firmware for QEMU mps2-an386 (Cortex-M4F): the agent, a TFLM-shaped
 * workload on a tensor arena placed right below the stack, and the scenario selector.
 * Register addresses: ARMv7-M Architecture Reference Manual B3.2 (SCB, SysTick) and the
 * MPS2 AN386 memory map (CMSDK UART0 at 0x40004000). Output goes to UART0 (QEMU's stdout).
 */
#include <stdint.h>

#include "arenascope/agent.h"
#include "arenascope/fault.h"
#include "workload.h"

#define REG(addr) (*(volatile uint32_t *)(addr))
#define SCB_CCR REG(0xE000ED14u)   /* Configuration and Control: DIV_0_TRP is bit 4   */
#define SCB_SHCSR REG(0xE000ED24u) /* MEMFAULTENA 16, BUSFAULTENA 17, USGFAULTENA 18   */
#define SYST_CSR REG(0xE000E010u)
#define SYST_RVR REG(0xE000E014u)
#define SYST_CVR REG(0xE000E018u)
#define UART0_DATA REG(0x40004000u)
#define UART0_CTRL REG(0x40004008u)
#define UART0_BAUDDIV REG(0x40004010u)

#define SHCSR_FAULT_HANDLERS (7u << 16)
#define CCR_DIV_0_TRP (1u << 4)
#define UNMAPPED_ADDRESS 0xF0000000u /* nothing is mapped there on mps2-an386 */
#define IDLE_TICKS 10u               /* 1 ms ticks between invokes */

extern uint32_t __StackLimit, __StackTop, __guard_start, __guard_end;

/* The tensor arena and the guard band: the linker script places them right below the stack. */
__attribute__((section(".tensor_arena"), aligned(16))) uint8_t tensor_arena[DEMO_ARENA_BYTES];
__attribute__((section(".stack_guard"), aligned(4))) uint8_t stack_guard[DEMO_GUARD_BYTES];
uint8_t *const demo_arena = tensor_arena;

static volatile uint32_t ticks;

/* Set from GDB (`set var demo_reset_after_fault = 1`) to reset the core after the agent has
 * recorded a fault, as a watchdog would: the record in .noinit survives, and `arena fault`
 * reads it after the reboot. */
volatile uint32_t demo_reset_after_fault;

void arenascope_fault_hook(const arenascope_fault_record_t *record)
{
    (void)record;
    if (demo_reset_after_fault) {
        REG(0xE000ED0Cu) = 0x05FA0004u; /* AIRCR: VECTKEY | SYSRESETREQ (ARMv7-M ARM B3.2.6) */
    }
    for (;;) {
        __asm__ volatile("wfi");
    }
}

void demo_systick_isr(void)
{
    ticks++;
}

static void uart_puts(const char *s)
{
    while (*s != '\0') {
        UART0_DATA = (uint32_t)(uint8_t)*s++;
    }
}

static void uart_putu(uint32_t v)
{
    char buf[11];
    int i = 10;

    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    uart_puts(&buf[i]);
}

static void idle(uint32_t n)
{
    uint32_t until = ticks + n;

    while ((int32_t)(ticks - until) < 0) {
        __asm__ volatile("wfi"); /* a spinning guest would take a whole host core */
    }
}

/* The deep recursion with the SysTick interrupt masked: an interrupt's 32-byte frame landing at a
 * different depth each run would change which bytes overwrite the operator table, and so which
 * fault the next invoke gets; without it the demo's fault is the same every time. */
static void recurse_without_ticks(void)
{
    SYST_CSR = 5u; /* enabled, no interrupt */
    demo_run_scenario(DEMO_STACK_INTO_ARENA);
    SYST_CSR = 7u;
}

/* Provokes the fault scenarios (workload.h). The configurable fault handlers are enabled at
 * boot; DEMO_HARD_FAULT turns them off first, so the bus fault escalates (HFSR.FORCED). */
static __attribute__((noinline)) void provoke(uint32_t scenario)
{
    volatile uint32_t zero = 0u, one = 1u;
    void (*volatile null_fn)(void) = 0;

    switch (scenario) {
    case DEMO_STACK_INTO_ARENA_HARD:
        SCB_SHCSR &= ~SHCSR_FAULT_HANDLERS;
        __asm__ volatile("dsb\n isb");
        recurse_without_ticks(); /* the next invoke faults */
        break;
    case DEMO_HARD_FAULT:
        SCB_SHCSR &= ~SHCSR_FAULT_HANDLERS;
        __asm__ volatile("dsb\n isb");
        /* fall through */
    case DEMO_BUS_FAULT: REG(UNMAPPED_ADDRESS) = 0u; break;
    case DEMO_UNDEFINED: __asm__ volatile("udf #0"); break;
    case DEMO_DIV_BY_ZERO:
        SCB_CCR |= CCR_DIV_0_TRP;
        __asm__ volatile("dsb\n isb");
        one = one / zero;
        break;
    case DEMO_NULL_CALL: null_fn(); break;
    default: break;
    }
}

int main(void)
{
    uint32_t invokes = 0;

    arenascope_init(&__StackLimit, &__StackTop, &__guard_start, &__guard_end);
    arenascope_fault_boot(); /* keep (and count) a fault record from an earlier boot, or start one */
    UART0_BAUDDIV = 16u;
    UART0_CTRL = 1u; /* TX enable */
    SCB_SHCSR |= SHCSR_FAULT_HANDLERS;
    SYST_RVR = 25000u - 1u; /* 1 ms at the 25 MHz system clock */
    SYST_CVR = 0u;
    SYST_CSR = 7u; /* enable, interrupt, processor clock */

    demo_allocate();
    uart_puts("arenascope demo: arena ready, running inferences\n");
    for (;;) {
        uint32_t scenario;
        demo_invoke();
        arenascope_measure();
        demo_invoke_done(++invokes);
        if (demo_scenario == DEMO_BUSY) {
            continue; /* no idle time, no UART: the next invoke and measure at once */
        }
        if (demo_scenario != DEMO_NORMAL) {
            uart_puts("arenascope demo: scenario ");
            uart_putu(demo_scenario);
            uart_puts("\n");
        }
        if (demo_scenario == DEMO_STACK_INTO_ARENA) {
            recurse_without_ticks();
            scenario = DEMO_NORMAL;
        } else {
            scenario = demo_run_scenario(demo_scenario);
        }
        if (scenario != DEMO_NORMAL) {
            provoke(scenario);
        }
        idle(IDLE_TICKS);
    }
}
