/* arenascope host port: see arenascope_port.h. The RISC-V port links it too, for a stack already
 * in use (ports/riscv/arenascope_port.h declares it there). */
#include "arenascope_port.h"

#include "arenascope/agent.h"

__attribute__((noinline)) void arenascope_port_stack_paint_below_sp(void)
{
    uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
    uintptr_t top = (frame - ARENASCOPE_STACK_PAINT_MARGIN) & ~(uintptr_t)3u;
    volatile uint32_t *p = (volatile uint32_t *)arenascope_descriptor.stack.low_addr;

    if (frame <= arenascope_descriptor.stack.low_addr || frame > arenascope_descriptor.stack.high_addr) {
        return;
    }
    while ((uintptr_t)p < top) {
        *p++ = arenascope_descriptor.stack_paint_pattern;
    }
}
