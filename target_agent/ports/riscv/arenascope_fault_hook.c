/*
 * arenascope RISC-V port: the default fault hook, alone in its object file so that a firmware
 * that defines its own arenascope_fault_hook never links this one (as ports/cortex_m does).
 */
#include "arenascope/fault.h"

__attribute__((weak)) void arenascope_fault_hook(const arenascope_fault_record_t *record)
{
    (void)record;
    for (;;) {
        __asm__ volatile("wfi"); /* sleep: a debugger can attach, a watchdog can reset */
    }
}
