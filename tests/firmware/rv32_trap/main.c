/* A bare RV32 firmware for qemu-system-riscv32 -M virt (picolibc, machine mode): it paints its
 * stack, uses some of it, then stores to an address no memory answers, which takes a store access
 * fault (mcause 7) into trap_handler, which loops. tests/integration/test_riscv.py runs it under
 * gdb-multiarch with the plugin: what arenascope says of a core whose traps it does not decode
 * yet (issue 36), and the stack it finds from picolibc's __stack / __stack_size.
 * Built by the test with the link line of ../shared/TOOLCHAIN-NOTES.md ("RISC-V (rv32) on QEMU"). */
#include <stdint.h>

extern char __stack[], __stack_size[];
volatile uint8_t rv32_buffer[4096];
volatile uint32_t rv32_sink;

__attribute__((interrupt("machine"), aligned(4))) void trap_handler(void)
{
    for (;;) {
    }
}

__attribute__((noinline)) uint32_t rv32_use_stack(uint32_t n)
{
    volatile uint32_t words[16];
    for (uint32_t i = 0; i < 16; i++) words[i] = n + i;
    return n ? rv32_use_stack(n - 1) + words[n % 16] : words[0];
}

int main(void)
{
    uint32_t sp;
    __asm__ volatile("mv %0, sp" : "=r"(sp));
    for (uint32_t *p = (uint32_t *)(__stack - (uintptr_t)__stack_size); (uintptr_t)p < sp - 64; p++)
        *p = 0xCCCCCCCCu; /* the paint arenascope's scan measures the high-water mark against */
    /* (.option arch: Debian 12's picolibc multilib is rv32imac, whose -march lacks Zicsr for GCC 12) */
    __asm__ volatile(".option push\n.option arch, +zicsr\ncsrw mtvec, %0\n.option pop" ::"r"(trap_handler));
    rv32_sink = rv32_use_stack(20);
    rv32_buffer[0] = (uint8_t)rv32_sink;
    *(volatile uint32_t *)0x90000000u = rv32_sink; /* no memory there: a store access fault */
    for (;;) {
    }
}
