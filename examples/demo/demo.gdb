# arenascope demo walk-through, run by tools/demo.sh after `target remote` (cwd: the repository).
# tools/demo.sh sets before it: $demo_fault (the scenario that ends the demo, examples/demo/
# workload.h: 8 = the stack runs into the arena, then a HardFault; 0 = none), $demo_overrun (1:
# show the tensor overrun too), $demo_interactive (1: stay), the viewer link's port (`set arena view-port`) and writes
# build/demo/model.gdb (`arena plan --model` on the demo's model). Everything the demo
# writes goes to build/demo/ (tools/demo.sh lists it at the end).
set pagination off
set confirm off
# Colour: tools/demo.sh wrote build/demo/colour.gdb (on for a terminal, off otherwise); the
# reports in files are always plain.
source build/demo/colour.gdb
set logging file build/demo/gdb-transcript.txt
set logging overwrite on
set logging enabled on
echo \n== 1. The inference loop: the map is sent to the window at every stop.\n
# Each stop names the inference it waits for: under load QEMU's gdbstub can report a second stop
# at the breakpoint GDB is stepping over, and a condition on the count lets GDB resume past it.
set $want = 1
break demo_invoke_done if invokes == $want
continue
# The live arena map (tools/demo.sh started the viewer, or renders the snapshots off-screen): fed
# from now on at every stop. build/demo/view.gdb waits for the window when there is one;
# build/demo/pause.gdb gives you a moment to watch it change.
source build/demo/view.gdb
arena snapshot build/demo/stop-1.json
source build/demo/pause.gdb
set $want = 2
continue
arena snapshot build/demo/stop-2.json
source build/demo/pause.gdb
set $want = 3
continue
delete
arena snapshot build/demo/stop-3.json
arena report build/demo/stop-3.html
echo \n== Three inferences ran. What the arena looks like (arena info, arena map):\n
arena info
arena map
echo \n== The memory plan over operator index: the firmware's arena is laid out from the plan\n
echo    arenascope-plan generated at build time for the demo's model:\n
arena plan
echo \n== The same chart from the model file alone, no target: what you get before flashing, with\n
echo    the arena size TFLM will need (docs/arena-budget.md):\n
source build/demo/model.gdb
echo \n== The rules:\n
set arena colour off
pipe arena check | tee build/demo/check-report.txt
source build/demo/colour.gdb

if $demo_overrun
  echo \n== 2. Scenario 2: an operator writes 128 B past its output tensor (the last 64 B land in the\n
  echo    free band, where its 0xAA canary shows them).\n
  set var demo_scenario = 2
  set $want = invokes + 1
  tbreak demo_invoke_done if invokes == $want
  continue
  set var demo_scenario = 0
  arena check
  arena snapshot build/demo/overrun.json
  source build/demo/pause.gdb
end

if $demo_fault
  echo \n== The fault (`tools/demo.sh --scenario`): provoked now; GDB stops where the agent records it.\n
  break arenascope_fault_hook
  set var demo_scenario = $demo_fault
  continue
  # (a spurious stop elsewhere is continued past, at most twice)
  python
for _ in range(2):
    if gdb.selected_frame().name() == "arenascope_fault_hook":
        break
    gdb.execute("continue")
end
  echo \n== The post-mortem (docs/hardfault.md):\n
  set arena colour off
  pipe arena fault | tee build/demo/fault-report.txt
  source build/demo/colour.gdb
  arena stack
  arena check
  arena snapshot build/demo/fault.json
  arena report build/demo/fault.html --svg build/demo/fault.svg
end
set logging enabled off
# tools/demo.sh --interactive ($demo_interactive 1) leaves the target stopped here for you.
if !$demo_interactive
  kill
  quit
end
