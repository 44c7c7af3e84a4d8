#!/usr/bin/python3
"""The live demo (tools/demo.sh --scenario live-busy): the demo firmware behind a real OpenOCD
(the rig in tests/rig/openocd_qemu: OpenOCD 0.12 -> JTAG bridge -> QEMU's Cortex-M4), switched
to demo scenario 9 (DEMO_BUSY: invoke and measure with no idle time, so the descriptor changes
all the time), watched by `arenascope live` through OpenOCD's Tcl port, then through a second
connection to OpenOCD's GDB port. Prints what each run measured (refreshes, torn reads
discarded, bytes a refresh) and keeps the last snapshot of each in OUT/.

    tools/live_demo.py BUILD_DIR OUT_DIR [--viewer] [--refreshes N]
The demo writes demo_scenario through OpenOCD's Tcl port, as a user would from GDB; arenascope
itself never writes target memory."""
import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "rig" / "openocd_qemu"))
sys.path.insert(0, str(ROOT / "gdbplugin"))
from arenascope_plugin.acquire import elfinfo  # noqa: E402
from chain import Chain  # noqa: E402

DEMO_BUSY = 9  # examples/demo/workload.h


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--viewer", action="store_true", help="open the map window (needs a display)")
    ap.add_argument("--refreshes", type=int, default=200)
    args = ap.parse_args()
    elf = pathlib.Path(args.build) / "firmware" / "demo_fw.elf"
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scenario = elfinfo.symbols(str(elf), ["demo_scenario"])["demo_scenario"]
    # two GDB connections, and none halts the core (docs/hardware.md, "The live link per GDB server")
    # (the event is emptied after init, through Tcl: an explicit `-c init` on the command line would
    # open the GDB port before the rig's Chain can reach the Tcl port)
    with Chain(str(elf), openocd_args=["-c", "qemu.cpu configure -gdb-max-connections 2"]) as ch:
        ch.tcl.call("qemu.cpu configure -event gdb-attach {}")
        ch.tcl.call(f"mww {scenario:#x} {DEMO_BUSY}")
        print(f"live demo: the firmware invokes and measures with no idle time (scenario {DEMO_BUSY}); OpenOCD "
              f"serves GDB on 127.0.0.1:{ch.gport} and Tcl on 127.0.0.1:{ch.tport}", flush=True)
        rc = 0
        for name, link in (("tcl", f"tcl:127.0.0.1:{ch.tport}"), ("gdb", f"gdb:127.0.0.1:{ch.gport}")):
            snap = out / f"live-{name}.json"
            cmd = [str(ROOT / "gdbplugin" / "arenascope"), "live", "--via", link, "--elf", str(elf), "--hz", "200",
                   "--refreshes", str(args.refreshes), "--duration", "60", "--snapshot-out", str(snap)]
            if not args.viewer:
                cmd.append("--no-viewer")
            print(f"\n$ gdbplugin/arenascope live --via {link} --elf {elf} --hz 200 --refreshes {args.refreshes}",
                  flush=True)
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            print(res.stderr.strip(), flush=True)
            if res.returncode != 0 or not snap.exists():
                rc = 1
                continue
            s = json.loads(snap.read_text())
            print(f"  last snapshot: {s['state']['invokes']} invokes, seq {s['state']['seq']}, "
                  f"{s['live']['refresh_hz']} refreshes/s, verdict {s['verdict']} ({snap})", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
