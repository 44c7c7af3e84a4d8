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
echo \n== The memory plan over operator index: the firmware's arena is laid out from the plan\n
echo    arenascope-plan generated at build time for the project's DS-CNN keyword-spotting model:\n
arena plan
echo \n== The same chart from the model file alone, no target: what you get before flashing, with\n
echo    the arena size TFLM will need (docs/arena-budget.md):\n
arena plan --model build/planner/dscnn_kws.tflite
echo \n== The rules:\n
arena check

echo \n== 2. Scenario 2: an operator writes 128 B past its output tensor.\n
set var demo_scenario = 2
break demo_invoke_done if invokes == 4
continue
delete
set var demo_scenario = 0
arena map --width 48
arena check

echo \n== 3. The HardFault: a deep recursion runs the stack through the guard band into the arena's\n
echo    persistent tail and returns; the next inference calls through the operator table it overwrote,\n
echo    and with the configurable fault handlers off the fault escalates to HardFault.\n
break arenascope_fault_hook
set var demo_scenario = 8
continue
arena fault
arena stack
arena check
arena snapshot build/demo-snapshot.json
kill
