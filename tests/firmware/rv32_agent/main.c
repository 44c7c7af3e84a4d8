/* A bare RV32 firmware with arenascope's agent and its RISC-V port, for qemu-system-riscv32 -M
 * virt (picolibc, machine mode): it starts the agent on picolibc's stack, keeps a fault record,
 * paints the stack below its SP, points mtvec at the port's trap entry, uses some stack, then
 * (scenario 0) stores to an address no memory answers: a store access fault (mcause 7) the port
 * records before it calls arenascope_fault_hook (the weak default: wfi forever); or (scenario 1,
 * set by GDB at main) locks the PMP stack guard (arenascope_fault_stack_limit) and recurses until
 * the stack reaches it. tests/integration/test_riscv.py builds it with the agent's sources and
 * checks the record through the plugin. NOT TFLM. */
#include <stdint.h>

#include "arenascope/agent.h"
#include "arenascope/fault.h"
#include "arenascope_port.h"

extern char __stack[], __stack_size[];
volatile uint32_t rv32_sink;
volatile uint32_t rv32_scenario; /* 0: a store fault; 1: the stack into the PMP guard */
volatile int rv32_guarded;       /* what arenascope_fault_stack_limit returned */

__attribute__((noinline)) uint32_t rv32_use_stack(uint32_t n)
{
    volatile uint32_t words[16];
    for (uint32_t i = 0; i < 16; i++) words[i] = n + i;
    return n ? rv32_use_stack(n - 1) + words[n % 16] : words[0];
}

int main(void)
{
    arenascope_init(__stack - (uintptr_t)__stack_size, __stack, 0, 0);
    arenascope_fault_boot();
    arenascope_port_stack_paint_below_sp();
    /* (.option arch: Debian 12's picolibc multilib is rv32imac, whose -march lacks Zicsr for GCC 12) */
    __asm__ volatile(".option push\n.option arch, +zicsr\ncsrw mtvec, %0\n.option pop" ::"r"(arenascope_fault_handler));
    if (rv32_scenario == 1) {
        rv32_guarded = arenascope_fault_stack_limit();
        rv32_sink = rv32_use_stack(1000); /* 80 B frames: past the 8 KiB stack, into the guard */
    }
    rv32_sink = rv32_use_stack(20);
    *(volatile uint32_t *)0x90000000u = rv32_sink; /* no memory there: a store access fault */
    for (;;) {
    }
}
