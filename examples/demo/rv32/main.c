/*
 * arenascope demo firmware for QEMU virt, RV32 (rv32imac, ilp32, machine mode, picolibc): the same
 * TFLM-shaped workload as the Cortex-M4 build (../workload.c) on a tensor arena placed right below
 * the stack, with a guard band between them (virt_rv32_demo.ld), and the scenario selector.
 *
 * picolibc's crt0 (crt0-semihost) sets sp to __stack, copies .data, zeroes .bss and calls main;
 * main starts the agent on picolibc's stack (__stack - __stack_size .. __stack), keeps the fault
 * record (in .preserve, which crt0 does not zero), paints the stack below its SP and points mtvec
 * at the agent's trap entry, arenascope_fault_handler (ports/riscv: it records the trap and calls
 * arenascope_fault_hook, the weak default, which sleeps in wfi). Output goes to picolibc's stdout,
 * semihosted (QEMU: -semihosting-config enable=on,target=native). No interrupt is enabled (there is
 * no SysTick here): every trap is an exception, and the idle between invokes is a short busy loop.
 * The PMP stack limit (arenascope_fault_stack_limit) is not armed, so that scenario 1's stack can
 * reach the arena, as it does on the Cortex-M4.
 */
#include <stdint.h>
#include <stdio.h>

#include "arenascope/agent.h"
#include "arenascope/fault.h"
#include "arenascope_port.h"
#include "workload.h"

#define UNMAPPED_ADDRESS 0x90000000u /* nothing is mapped there on QEMU virt: a store access fault */
#define IDLE_SPINS 20000u            /* a short, bounded busy loop between invokes */

extern char __stack[], __stack_size[], __guard_start[], __guard_end[];

/* The tensor arena and the guard band: the linker script places them right below the stack. */
__attribute__((section(".tensor_arena"), aligned(16))) uint8_t tensor_arena[DEMO_ARENA_BYTES];
__attribute__((section(".stack_guard"), aligned(4))) uint8_t stack_guard[DEMO_GUARD_BYTES];
uint8_t *const demo_arena = tensor_arena;

static void idle(void)
{
    volatile uint32_t spin;

    for (spin = 0u; spin < IDLE_SPINS; spin++) {
    }
}

/* Provokes the fault scenarios (workload.h) that exist on RISC-V. Each traps to mtvec, where the
 * agent records mcause, mepc and mtval. Those that do not apply here:
 *   DEMO_HARD_FAULT, DEMO_STACK_INTO_ARENA_HARD: RISC-V has no configurable fault handlers to turn
 *     off and no escalation to a HardFault: every exception goes to the one trap vector (mtvec);
 *   DEMO_DIV_BY_ZERO: integer division by zero does not trap on RISC-V (the quotient is all ones,
 *     the unprivileged ISA, M extension): the demo divides, says so and goes on. */
static __attribute__((noinline)) void provoke(uint32_t scenario)
{
    volatile uint32_t zero = 0u, one = 1u;
    void (*volatile null_fn)(void) = 0;

    switch (scenario) {
    case DEMO_BUS_FAULT: *(volatile uint32_t *)UNMAPPED_ADDRESS = 0u; break; /* mcause 7 */
    case DEMO_UNDEFINED: __asm__ volatile("unimp"); break;                   /* illegal instruction, mcause 2 */
    case DEMO_NULL_CALL: null_fn(); break; /* instruction access fault at 0, mcause 1 */
    case DEMO_DIV_BY_ZERO:
        one = one / zero;
        printf("arenascope demo: 1 / 0 = %#lx: no trap on RISC-V\n", (unsigned long)one);
        demo_scenario = DEMO_NORMAL;
        break;
    default:
        printf("arenascope demo: scenario %lu does not apply on RISC-V\n", (unsigned long)scenario);
        demo_scenario = DEMO_NORMAL;
        break;
    }
}

int main(void)
{
    uint32_t invokes = 0;

    arenascope_init(__stack - (uintptr_t)__stack_size, __stack, __guard_start, __guard_end);
    arenascope_fault_boot(); /* keep (and count) a fault record from an earlier boot, or start one */
    arenascope_port_stack_paint_below_sp();
    /* (.option arch: Debian 12's picolibc multilib is rv32imac, whose -march lacks Zicsr for GCC 12) */
    __asm__ volatile(".option push\n.option arch, +zicsr\ncsrw mtvec, %0\n.option pop" ::"r"(arenascope_fault_handler));

    demo_allocate();
    printf("arenascope demo: arena ready, running inferences\n");
    for (;;) {
        uint32_t scenario;
        demo_invoke();
        arenascope_measure();
        demo_invoke_done(++invokes);
        if (demo_scenario == DEMO_BUSY) {
            continue; /* no idle time, no output: the next invoke and measure at once */
        }
        if (demo_scenario != DEMO_NORMAL) {
            printf("arenascope demo: scenario %lu\n", (unsigned long)demo_scenario);
        }
        scenario = demo_run_scenario(demo_scenario); /* 1 (no interrupt to mask here) and 2 run there */
        if (scenario != DEMO_NORMAL) {
            provoke(scenario);
        }
        idle();
    }
}
