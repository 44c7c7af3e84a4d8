/*
 * A minimal Cortex-M firmware for tests/integration/test_python_package.py: the agent linked with
 * --gc-sections and the demo's linker script (examples/demo/cortex_m4/mps2_an386.ld), built with
 * and without the .debug_gdb_scripts entries of arenascope/gdb_autoload.h, to show that they cost
 * no flash and that GDB auto-loads the plugin from them. It never runs: GDB only reads the ELF.
 *   -DARENASCOPE_EMBED_GDB_SCRIPT=1      the agent's own inline loader (src/arenascope_agent.c)
 *   -DAUTOLOAD_IN_MAIN                   the same inline loader from here (merged with the agent's)
 *   -DSCRIPT_FILE="\"/path/arenascope.py\""   a script file entry
 */
#include <stdint.h>

#include "arenascope/gdb_autoload.h"

#ifdef AUTOLOAD_IN_MAIN
ARENASCOPE_GDB_AUTOLOAD();
#endif
#ifdef SCRIPT_FILE
ARENASCOPE_GDB_SCRIPT_FILE(SCRIPT_FILE);
#endif

/* The demo's linker script wants an arena with the guard band right after it. */
__attribute__((section(".tensor_arena"), aligned(16))) uint8_t tensor_arena[64];
__attribute__((section(".stack_guard"))) uint8_t stack_guard[32];

extern uint32_t __StackTop;
void Reset_Handler(void);

__attribute__((section(".isr_vector"), used))
const uintptr_t vectors[2] = {(uintptr_t)&__StackTop, (uintptr_t)Reset_Handler};

void Reset_Handler(void)
{
    for (;;) {
    }
}
