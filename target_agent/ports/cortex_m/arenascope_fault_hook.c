/*
 * arenascope Cortex-M port: the default fault hook, alone in its object file so that a firmware
 * that defines its own arenascope_fault_hook never links this one (a linked-then-discarded weak
 * copy would leave debug info claiming address 0, and a breakpoint on the hook would land there).
 */
#include "arenascope/fault.h"

__attribute__((weak)) void arenascope_fault_hook(const arenascope_fault_record_t *record)
{
    (void)record;
    for (;;) {
        __asm__ volatile("wfi"); /* sleep: a debugger can attach, a watchdog can reset */
    }
}
