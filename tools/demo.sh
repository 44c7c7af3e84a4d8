#!/usr/bin/env bash
# The demo, one command from a fresh clone: installs what is missing (apt-get), builds, boots the
# demo firmware on QEMU's mps2-an386 (Cortex-M4F), attaches gdb-multiarch with the arenascope
# plugin over the remote protocol (as it would through OpenOCD on a board), opens the live arena
# map window (with no display: renders it off-screen), runs the inference loop with the map
# updating at each stop, provokes a fault (the stack running into the arena, by default) and
# shows the post-mortem in the terminal and in the window. Everything it writes is in build/demo/.
#
#   tools/demo.sh [--scenario NAME] [--model FILE.tflite] [--interactive] [--headless] [--no-build]
#     --scenario  stack-into-arena (default: the stack runs into the arena, then a HardFault),
#                 stack-into-arena-busfault, overrun-only, busfault, hardfault, undefined,
#                 divide-by-zero, null-call, none; on the TFLM stand-in firmware with no agent
#                 (examples/tflm_standin/): undersized (the arena 300 B short, the status checked),
#                 undersized-ignored (the status ignored), stack-into-agentless-arena; live-busy
#                 (the live view through a real OpenOCD, Tcl port then GDB port, of the firmware
#                 invoking and measuring with no idle time: tools/live_demo.py)
#     --model     lay the demo firmware's arena out for this .tflite (rebuilds; default: the
#                 project's DS-CNN keyword-spotting model)
#     --interactive  then stay at the (gdb) prompt with everything loaded
#     --headless     no window even with a display: screenshots in build/demo/ instead
#     --no-build     use the build as it is (tests)
# Ports are chosen free; QEMU, GDB and the viewer it starts are ended when it ends, on Ctrl-C too.
set -euo pipefail
usage() { sed -n '9,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
SCENARIO=stack-into-arena MODEL="" INTERACTIVE=0 HEADLESS=0 BUILD=1 STANDIN=0 FAULT=0 OVERRUN=0
while [ $# -gt 0 ]; do
  case "$1" in
    --scenario) [ $# -ge 2 ] || usage; SCENARIO=$2; shift 2 ;;
    --model) [ $# -ge 2 ] || usage; MODEL=$2; shift 2 ;;
    --interactive) INTERACTIVE=1; shift ;;
    --headless) HEADLESS=1; shift ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) usage ;;
    *) echo "tools/demo.sh: unknown option '$1'"; usage ;;
  esac
done
# The scenario numbers are examples/demo/workload.h's enum demo_scenario.
case "$SCENARIO" in
  stack-into-arena) FAULT=8 OVERRUN=1 ;;
  stack-into-arena-busfault) FAULT=1 OVERRUN=1 ;;
  overrun-only) FAULT=0 OVERRUN=1 ;;
  busfault) FAULT=3 OVERRUN=0 ;;
  hardfault) FAULT=4 OVERRUN=0 ;;
  undefined) FAULT=5 OVERRUN=0 ;;
  divide-by-zero) FAULT=6 OVERRUN=0 ;;
  null-call) FAULT=7 OVERRUN=0 ;;
  none) FAULT=0 OVERRUN=0 ;;
  undersized) STANDIN=1 ;;
  undersized-ignored) STANDIN=2 ;;
  stack-into-agentless-arena) STANDIN=3 ;;
  live-busy) LIVE=1 ;;
  *) echo "tools/demo.sh: unknown scenario '$SCENARIO'"; usage ;;
esac
if [ -n "$MODEL" ]; then
  [ -f "$MODEL" ] || { echo "tools/demo.sh: no such model file: $MODEL"; exit 2; }
  MODEL=$(cd "$(dirname "$MODEL")" && pwd)/$(basename "$MODEL")
fi
cd "$(dirname "$0")/.."
if [ "$BUILD" = 1 ]; then
  bash tools/setup-deps.sh
  ARENASCOPE_DEMO_MODEL="$MODEL" bash tools/build.sh
fi

if [ "${LIVE:-0}" = 1 ]; then  # the live view through a real OpenOCD (tools/live_demo.py)
  rm -rf build/demo && mkdir -p build/demo
  VIEW=()
  if [ "$HEADLESS" = 0 ] && [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then VIEW=(--viewer); fi
  exec /usr/bin/python3 tools/live_demo.py build build/demo "${VIEW[@]}"
fi

ELF=build/firmware/demo_fw.elf
SCRIPT=examples/demo/demo.gdb
STANDIN_BYTES=0
if [ "$STANDIN" != 0 ]; then
  ELF=build/firmware/tflm_standin/tflm_standin_fw.elf
  SCRIPT=examples/tflm_standin/demo.gdb
  if [ "$STANDIN" != 3 ]; then  # 300 B below the minimum arena the planner gives for its model
    STANDIN_BYTES=$(build/planner/arenascope-plan --json build/planner/dscnn_kws.tflite |
      /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["arena"]["minimum_bytes"] - 300)')
  fi
fi
OUT=build/demo
[ -f "$ELF" ] || { echo "tools/demo.sh: $ELF is not built (run without --no-build)"; exit 1; }
rm -rf "$OUT" && mkdir -p "$OUT"
DEMO_MODEL=$(sed -n 's/^ARENASCOPE_DEMO_MODEL:FILEPATH=//p' build/CMakeCache.txt)
echo "arena plan --model ${DEMO_MODEL:-build/planner/dscnn_kws.tflite}" > "$OUT/model.gdb"
if [ -t 1 ]; then echo "set arena colour on" > "$OUT/colour.gdb"; else echo "set arena colour off" > "$OUT/colour.gdb"; fi
: > "$OUT/pause.gdb"
# Test hook (tests/integration/test_demo.py): hold each stop this many seconds, so that a test can
# interrupt the walk-through at a known point however fast the machine runs it.
if [ -n "${ARENASCOPE_DEMO_PAUSE_S:-}" ]; then
  [[ "$ARENASCOPE_DEMO_PAUSE_S" =~ ^[0-9]+$ ]] || { echo "tools/demo.sh: ARENASCOPE_DEMO_PAUSE_S must be whole seconds"; exit 2; }
  echo "shell sleep $ARENASCOPE_DEMO_PAUSE_S" > "$OUT/pause.gdb"
fi
echo "arena view --no-launch" > "$OUT/view.gdb"

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
VIEW_PORT=$(free_port)  # the live map's port: another GDB's `arena view` may hold the default 47800
QEMU_PID="" GDB_PID="" VIEWER_PID=""
cleanup() {
  for pid in $GDB_PID $VIEWER_PID $QEMU_PID; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'cleanup; QEMU_PID="" GDB_PID="" VIEWER_PID=""; echo; echo "tools/demo.sh: interrupted; QEMU, GDB and the viewer are stopped"; exit 130' INT TERM

qemu-system-arm -M mps2-an386 -kernel "$ELF" -nographic -monitor none -S \
  -gdb "tcp:127.0.0.1:$PORT" >"$OUT/uart.txt" 2>&1 </dev/null &
QEMU_PID=$!
WINDOW=0
if [ "$HEADLESS" = 0 ] && [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  WINDOW=1
  build/viewer/arenascope-viewer --connect "127.0.0.1:$VIEW_PORT" >"$OUT/viewer.log" 2>&1 </dev/null &
  VIEWER_PID=$!
  echo "arena view --no-launch --wait 20" > "$OUT/view.gdb"  # the window connects before the walk-through goes on
  echo "shell sleep 1.5" > "$OUT/pause.gdb"                  # time to watch the map change at each stop
fi
printf 'qemu %s\nviewer %s\n' "$QEMU_PID" "$VIEWER_PID" > "$OUT/pids"

echo "arenascope demo: QEMU mps2-an386 (Cortex-M4F) running $ELF, gdbstub on 127.0.0.1:$PORT"
[ "$STANDIN" != 0 ] && echo "  (the TFLM stand-in firmware, no arenascope agent: agentless mode; examples/tflm_standin/)"
MODEL_SHOWN=${DEMO_MODEL:-build/planner/dscnn_kws.tflite}
echo "  scenario: $SCENARIO; model: $MODEL_SHOWN"
[ "$WINDOW" = 1 ] && echo "  the arena map window follows every stop (viewer on 127.0.0.1:$VIEW_PORT)"
# QEMU's gdbstub takes the first client and lets the guest run when it leaves; GDB retries
# until QEMU listens.
GDB_ARGS=(-q -nx "$ELF" -ex "set tcp auto-retry on" -ex "set tcp connect-timeout 15"
          -ex "target remote 127.0.0.1:$PORT" -ex "source gdbplugin/arenascope.py"
          -ex "set arena view-port $VIEW_PORT" -ex "set \$demo_fault = $FAULT" -ex "set \$demo_overrun = $OVERRUN"
          -ex "set \$demo_interactive = $INTERACTIVE"
          -ex "set \$standin_case = $STANDIN" -ex "set \$standin_bytes = $STANDIN_BYTES"
          -x "$SCRIPT")
if [ "$INTERACTIVE" = 1 ]; then
  gdb-multiarch "${GDB_ARGS[@]}" -ex "echo \n== Your turn: the target is stopped; try arena info, arena map, help arena.\n"
else
  # In the background, so that Ctrl-C reaches this script's trap at once; not -batch: in batch
  # mode a failing `arena check` is an error that would end the walk-through.
  gdb-multiarch "${GDB_ARGS[@]}" </dev/null &
  GDB_PID=$!
  wait "$GDB_PID" || true
  GDB_PID=""
fi

echo
echo "== What the firmware printed on its UART:"
grep -v "^qemu-system-arm: QEMU: Terminated via GDBstub" "$OUT/uart.txt" || true
# The window's pictures, rendered off-screen, with a display too (a window closes with the demo).
for snap in "$OUT"/stop-3.json "$OUT"/overrun.json "$OUT"/fault.json; do
  [ -f "$snap" ] || continue
  xvfb-run -a -s "-screen 0 1280x800x24" build/viewer/arenascope-viewer "$snap" \
    --screenshot "${snap%.json}.png" >/dev/null 2>&1 || echo "tools/demo.sh: could not render $snap"
done
LAST=$(ls -t "$OUT"/fault.json "$OUT"/overrun.json "$OUT"/stop-3.json 2>/dev/null | head -1 || true)
echo
echo "== The demo wrote, in $(pwd)/$OUT/:"
describe() {
  case "$1" in
    gdb-transcript.txt) echo "everything GDB printed" ;;
    check-report.txt) [ "$STANDIN" != 0 ] && echo "arena check at the stop" || echo "arena check after three inferences" ;;
    fault-report.txt) echo "the post-mortem (arena fault)" ;;
    *.json) echo "a snapshot (docs/snapshot-schema.md)" ;;
    *.png) echo "the arena map window, rendered off-screen" ;;
    *.html) echo "the report: map, plan, RAM, summary, fault, every region (open in a browser)" ;;
    *.svg) echo "the report's pictures and text as one SVG" ;;
    uart.txt) echo "what the firmware printed on its UART" ;;
    viewer.log) echo "the window's own messages" ;;
  esac
}
for f in gdb-transcript.txt check-report.txt fault-report.txt stop-1.json stop-2.json stop-3.json overrun.json \
         fault.json stop-3.png overrun.png fault.png stop-3.html fault.html fault.svg uart.txt viewer.log; do
  if [ -f "$OUT/$f" ]; then printf '   %-20s %s\n' "$f" "$(describe "$f")"; fi
done
if [ "$WINDOW" = 1 ]; then
  echo "   Open a snapshot again any time: build/viewer/arenascope-viewer ${LAST:-$OUT/stop-3.json}"
  if [ -t 0 ]; then
    read -r -p "== The arena map window shows the post-mortem; press Enter to close it and end the demo. " _ || true
  fi
else
  why="no display"
  [ "$HEADLESS" = 1 ] && why="--headless"
  echo "   ($why, so the window was rendered off-screen; open it with: build/viewer/arenascope-viewer ${LAST:-$OUT/stop-3.json})"
fi
