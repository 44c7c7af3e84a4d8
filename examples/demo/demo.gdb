# arenascope demo walk-through (run by tools/demo.sh after `target remote`).
set pagination off
set confirm off
source gdbplugin/arenascope.py
set arena colour on
# The live arena map window: opens now when there is a display, and follows every stop below.
arena view

break demo_invoke_done if invokes == 3
continue
delete
echo \n== 1. Three inferences ran. What the arena looks like (arena info, arena map):\n
arena info
arena map
echo \n== The memory plan over operator index (TFLM's own plan for keyword_scrambled_8bit):\n
arena plan
echo \n== The rules:\n
arena check

echo \n== 2. Scenario 2: operator 1 writes 128 B past its output tensor.\n
set var demo_scenario = 2
break demo_invoke_done if invokes == 4
continue
delete
set var demo_scenario = 0
arena map --width 48
arena check

echo \n== 3. Scenario 1: a deep recursion runs the stack through the guard band into the arena's\n
echo    persistent tail and returns; the next inference calls through the operator table it overwrote.\n
break BusFault_Handler
set var demo_scenario = 1
continue
printf "CFSR 0x%08x (0x8200 = PRECISERR + BFARVALID), BFAR 0x%08x (the load at 0x5a5a5a5a; QEMU reports the word address)\n", *(unsigned *)0xE000ED28, *(unsigned *)0xE000ED38
arena stack
arena whereis nodes
arena check
arena snapshot build/demo-snapshot.json
kill
