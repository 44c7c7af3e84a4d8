# arenascope demo walk-through for the agentless scenarios, on the TFLM STAND-IN firmware
# (examples/tflm_standin/: NOT TensorFlow Lite Micro, a stand-in with TFLM's class and member
# names; no arenascope agent in it). Run by tools/demo.sh after `target remote`; it sets before
# it: $standin_case (1 undersized, status checked; 2 undersized, status ignored; 3 the stack runs
# into the arena), $standin_bytes (the arena size the interpreter gets; 0: the built size) and
# $demo_interactive. Everything it writes goes to build/demo/.
set pagination off
set confirm off
source build/demo/colour.gdb
set logging file build/demo/gdb-transcript.txt
set logging overwrite on
set logging enabled on
break standin_boot
continue
delete
set var standin_scenario = $standin_case
if $standin_bytes
  set var standin_arena_bytes = $standin_bytes
end
source build/demo/view.gdb
if $standin_case == 1
  echo \n== An unmodified TFLM firmware (no agent) whose arena is 300 B too small; the app checks\n
  echo    AllocateTensors' status and stops in allocation_failed():\n
  break allocation_failed
end
if $standin_case == 2
  echo \n== The same arena, but the app ignores AllocateTensors' status, writes through input(0) and\n
  echo    keeps calling Invoke; it ends in invoke_failed():\n
  break invoke_failed
end
if $standin_case == 3
  echo \n== An unmodified TFLM firmware (no agent) with its arena right below the stack; after one\n
  echo    inference a deep recursion runs the stack past its limit into the arena's tail, and the\n
  echo    next Invoke HardFaults. GDB stops in the HardFault handler (CubeMX's `while (1) {}`):\n
  hbreak HardFault_Handler
end
continue
echo \n== The post-mortem (docs/hardfault.md):\n
set arena colour off
pipe arena fault | tee build/demo/fault-report.txt
source build/demo/colour.gdb
arena info
arena stack
pipe arena check | tee build/demo/check-report.txt
arena snapshot build/demo/fault.json
arena report build/demo/fault.html --svg build/demo/fault.svg
set logging enabled off
if !$demo_interactive
  kill
  quit
end
