# arenascope demo walk-through (run by tools/demo.sh after `target remote`).
# Plain GDB for now: the `arena` commands arrive with the GDB plugin (gdbplugin/).
set pagination off
set confirm off
set print pretty on

break demo_invoke_done if invokes == 3
continue
delete
echo \n== 1. Three inferences ran. The agent's descriptor, found by its symbol:\n
print/x arenascope_descriptor
echo \n== The arena: base, size, head end, temp high-water, tail start (bytes from base):\n
printf "arena 0x%08x, %u bytes; head 0..+%u, temp +%u..+%u, tail starts at +%u (%u B persistent)\n", arenascope_descriptor.arena[0].base_addr, arenascope_descriptor.arena[0].size_bytes, arenascope_descriptor.arena[0].head_bytes, arenascope_descriptor.arena[0].head_bytes, arenascope_descriptor.arena[0].temp_bytes, arenascope_descriptor.arena[0].tail_offset, arenascope_descriptor.arena[0].size_bytes - arenascope_descriptor.arena[0].tail_offset
printf "stack 0x%08x..0x%08x, peak %u B measured on target; guard band 0x%08x..0x%08x\n", arenascope_descriptor.stack.low_addr, arenascope_descriptor.stack.high_addr, arenascope_descriptor.stack.high_addr - arenascope_descriptor.stack.low_addr - arenascope_descriptor.stack.touched_lo, arenascope_descriptor.guard.low_addr, arenascope_descriptor.guard.high_addr
echo \n== The first 3 of the published regions (TFLM's own plan for keyword_scrambled_8bit):\n
print ((arenascope_region_t *)arenascope_descriptor.arena[0].regions_addr)[0]@3

echo \n== 2. Scenario 1: a deep recursion runs the stack through the guard band into the arena's\n
echo    persistent tail and returns; the next inference calls through the operator table it overwrote.\n
break BusFault_Handler
set var demo_scenario = 1
continue
printf "CFSR 0x%08x (0x8200 = PRECISERR + BFARVALID), BFAR 0x%08x (the load at 0x5a5a5a5a; QEMU reports the word address)\n", *(unsigned *)0xE000ED28, *(unsigned *)0xE000ED38
echo \n== The guard band below the stack no longer holds 0xAA, and the operator table holds 0x5A:\n
x/8xw &__guard_start
x/4xw nodes
echo \n== Where it faulted:\n
backtrace
