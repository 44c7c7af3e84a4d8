/*
 * NOT TensorFlow Lite Micro. Part of the TFLM STAND-IN: a firmware with TFLM 90b983c2's class and
 * member names for what arenascope's agentless mode reads, so that its post-mortem is tested in
 * CI where real TFLM cannot be built; it lays out the arena by re-enacting the allocation steps
 * arenascope-plan predicts.
 *
 * Startup for QEMU virt, RV32 in machine mode (tflm_standin_rv32_fw.elf), what startup.cpp is on
 * the Cortex-M4. picolibc's crt0 (crt0-semihost) runs first: sp at __stack, .data copied, .bss
 * zeroed, its own trap vector in mtvec, then main. main calls standin_rv32_start() first, which
 * points mtvec at trap_handler and paints the stack 0xCCCCCCCC (the agent's default pattern, the
 * one arenascope's scan measures the high-water mark against) from its bottom, picolibc.ld's
 * __stack - __stack_size, up to 64 B below the SP: crt0 and main already stand on its top.
 * No interrupt is enabled: every trap is an exception, and trap_handler loops in it forever, as
 * the Cortex-M build's HardFault_Handler (CubeMX's `while (1) {}`) does.
 */
#include <stdint.h>

extern "C" {
extern char __stack[], __stack_size[];

// mtvec's direct mode: BASE is the handler's address, 4-byte aligned.
__attribute__((interrupt("machine"), aligned(4), noinline, used)) void trap_handler(void)
{
    for (;;) {
    }
}

__attribute__((noinline)) void standin_rv32_start(void)
{
    // (.option arch: Debian 12's picolibc multilib is rv32imac, whose -march lacks Zicsr for GCC 12)
    __asm__ volatile(".option push\n.option arch, +zicsr\ncsrw mtvec, %0\n.option pop" ::"r"(trap_handler));
    uintptr_t sp;
    __asm__ volatile("mv %0, sp" : "=r"(sp));
    for (volatile uint32_t *p = (volatile uint32_t *)(__stack - (uintptr_t)__stack_size); (uintptr_t)p < sp - 64; ++p)
        *p = 0xCCCCCCCCu;
}
}
