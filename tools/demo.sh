#!/usr/bin/env bash
# The demo: installs what is missing, builds, boots the demo firmware on QEMU's mps2-an386
# (Cortex-M4F) halted at reset, attaches gdb-multiarch over the remote protocol (as it would
# through OpenOCD on a board) and walks through examples/demo/demo.gdb.
#   tools/demo.sh                 scripted walk-through, then exit
#   tools/demo.sh --interactive   the same, then stay at the (gdb) prompt
set -euo pipefail
case "${1:-}" in
  ""|--interactive) ;;
  *) echo "usage: tools/demo.sh [--interactive]"; exit 2 ;;
esac
cd "$(dirname "$0")/.."
bash tools/setup-deps.sh
bash tools/build.sh

ELF=build/firmware/demo_fw.elf
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
VIEW_PORT=$(free_port)  # the live map's port: another GDB's `arena view` may hold the default 47800
UART_LOG=$(mktemp /tmp/arenascope-uart.XXXXXX)
qemu-system-arm -M mps2-an386 -kernel "$ELF" -nographic -monitor none -S \
  -gdb "tcp:127.0.0.1:$PORT" >"$UART_LOG" 2>&1 </dev/null &
QEMU_PID=$!
trap 'kill $QEMU_PID 2>/dev/null || true; rm -f "$UART_LOG"' EXIT
# No probe connection: QEMU's gdbstub takes the first client and lets the guest run when it
# leaves. GDB retries until QEMU listens.
CONNECT=(-ex "set tcp auto-retry on" -ex "set tcp connect-timeout 15" -ex "target remote 127.0.0.1:$PORT"
         -ex "source gdbplugin/arenascope.py" -ex "set arena view-port $VIEW_PORT")

echo "arenascope demo: QEMU mps2-an386 (Cortex-M4F) running $ELF, gdbstub on 127.0.0.1:$PORT"
if [ "${1:-}" = "--interactive" ]; then
  gdb-multiarch -q -nx "$ELF" "${CONNECT[@]}" -x examples/demo/demo.gdb
else
  # Not -batch: in batch mode a failing `arena check` is an error that would end the script.
  gdb-multiarch -q -nx "$ELF" "${CONNECT[@]}" -x examples/demo/demo.gdb </dev/null
fi
echo
echo "== what the firmware printed on its UART:"
cat "$UART_LOG"

echo
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  echo "== The arena map window stays open with the last snapshot (close it when done)."
  echo "   Again any time: build/viewer/arenascope-viewer build/demo-snapshot.json"
else
  PNG=build/demo-arena-map.png
  xvfb-run -a -s "-screen 0 1280x800x24" build/viewer/arenascope-viewer build/demo-snapshot.json \
    --screenshot "$PNG" >/dev/null
  echo "== No display here, so the arena map window was rendered off-screen instead:"
  echo "   $(pwd)/$PNG  (from the snapshot $(pwd)/build/demo-snapshot.json)"
  echo "   With a display: build/viewer/arenascope-viewer build/demo-snapshot.json"
fi
