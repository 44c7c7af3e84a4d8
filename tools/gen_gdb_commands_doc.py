#!/usr/bin/env python3
"""Writes docs/gdb-commands.md: every `arena` command with its help and its real output on the
demo firmware (QEMU mps2-an386, gdb-multiarch). tests/integration/test_gdb_commands_doc.py
regenerates it and checks the committed file is current, so the examples never go stale.

Usage: tools/gen_gdb_commands_doc.py [OUTPUT]   (default docs/gdb-commands.md; needs a build)
"""
import os
import pathlib
import re
import socket
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
ELF = ROOT / "build" / "firmware" / "demo_fw.elf"
PLUGIN = "gdbplugin/arenascope.py"

# (title, setup commands (not shown), shown commands)
EXAMPLES = [
    ("arena", [], []),
    ("arena info", ["break demo_invoke_done if invokes == 3", "continue", "delete"], ["arena info"]),
    ("arena map", ["break demo_invoke_done if invokes == 3", "continue", "delete"], ["arena map --width 48"]),
    ("arena regions", ["break demo_invoke_done if invokes == 3", "continue", "delete"],
     ["arena regions --sort lifetime"]),
    ("arena plan", ["break demo_invoke_done if invokes == 3", "continue", "delete"], ["arena plan"]),
    ("arena stack", ["break demo_invoke_done if invokes == 3", "continue", "delete"], ["arena stack"]),
    ("arena check", ["break demo_invoke_done if invokes == 3", "continue", "delete"], ["arena check"]),
    ("arena check after a tensor overrun (scenario 2)",
     ["break demo_invoke_done if invokes == 1", "continue", "delete", "set var demo_scenario = 2",
      "break demo_invoke_done if invokes == 2", "continue", "delete"], ["arena check", "arena map --width 48"]),
    ("arena check after the stack ran into the arena (scenario 1)",
     ["break demo_invoke_done if invokes == 1", "continue", "delete", "break BusFault_Handler",
      "set var demo_scenario = 1", "continue"], ["arena check", "arena stack"]),
    ("arena budget", [], ["arena budget --model build/planner/dscnn_kws.tflite"]),
    ("arena soak", ["break demo_invoke_done if invokes == 3", "continue", "delete"], ["arena soak 20"]),
    ("arena whereis", ["break demo_invoke_done if invokes == 3", "continue", "delete"],
     ["arena whereis tensor_arena + 520", "arena whereis tensor_arena + 11000", "arena whereis &__guard_start"]),
    ("arena snapshot", ["break demo_invoke_done if invokes == 3", "continue", "delete"],
     ["arena snapshot /tmp/arena.json"]),
    ("arena diff", ["break demo_invoke_done if invokes == 1", "continue", "delete", "arena snapshot /tmp/arena.json",
                    "set var demo_scenario = 2", "break demo_invoke_done if invokes == 2", "continue", "delete"],
     ["arena diff /tmp/arena.json"]),
    ("arena fault", ["break demo_invoke_done if invokes == 1", "continue", "delete", "break arenascope_fault_hook",
                     "set var demo_scenario = 8", "continue"], ["arena fault"]),
    ("arena view", ["break demo_invoke_done if invokes == 3", "continue", "delete"],
     ["arena view --no-launch --port 47990", "arena refresh"]),
    ("arena refresh", [], []),
    ("arena live", ["break demo_invoke_done if invokes == 3", "continue", "delete"],
     ["arena live status", "arena live --via tcl:127.0.0.1:1", "arena live --via gdb:127.0.0.1:1"]),
    ("arena dump", ["break demo_invoke_done if invokes == 1", "continue", "delete", "break arenascope_fault_hook",
                    "set var demo_scenario = 1", "continue",
                    "dump binary memory /tmp/arenascope-ram.bin &__data_start &__StackTop",
                    "set logging file /tmp/arenascope-regs.txt", "set logging overwrite on", "set logging redirect on",
                    "set logging enabled on", "info registers", "set logging enabled off"],
     ["arena dump load /tmp/arenascope-ram.bin@0x20000000 --registers /tmp/arenascope-regs.txt", "arena dump",
      "arena stack", "arena dump forget"]),
    ("arena version", [], ["arena version"]),
    ("errors", [], ["arena info"]),
    ("errors (running target)", ["continue &"], ["arena info"]),
    ("errors (corrupt descriptor)", ["break demo_invoke_done if invokes == 1", "continue", "delete",
                                     "set var arenascope_descriptor.abi_major = 2"], ["arena info"]),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(setup, shown, connect=True):
    port = free_port()
    qemu = subprocess.Popen(["qemu-system-arm", "-M", "mps2-an386", "-kernel", str(ELF),
                             "-nographic", "-monitor", "none", "-S", "-gdb", f"tcp:127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        marker = "@@arenascope-doc@@"
        cmd = ["gdb-multiarch", "-q", "-nx", "-batch", str(ELF.relative_to(ROOT))]
        ex = []
        if connect:
            ex += ["set tcp auto-retry on", "set tcp connect-timeout 15", f"target remote 127.0.0.1:{port}"]
        ex += [f"source {PLUGIN}", "set arena colour off"] + setup
        for c in shown:
            ex += [f"echo {marker}{c}\\n", c]
        ex += ["echo " + marker + "end\\n", "interrupt" if "continue &" in setup else "echo", "kill"]
        for e in ex:
            cmd += ["-ex", e]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                              env=dict(os.environ, TERM="dumb"))
        # GDB writes errors to stderr: interleave by putting them after the marker they follow.
        text = proc.stdout
        errors = [e for e in proc.stderr.splitlines() if e.startswith("arena ")]
        blocks = text.split(marker)[1:]
        out = []
        for block, command in zip(blocks, shown, strict=False):
            lines = block.splitlines()[1:]
            lines += [e for e in errors if e.startswith(command.split()[0] + " " + command.split()[1] + ":")]
            out.append((command, "\n".join(line for line in lines if line.strip())))
        return out
    finally:
        qemu.kill()
        qemu.wait()


def help_text(name):
    proc = subprocess.run(["gdb-multiarch", "-q", "-nx", "-batch", "-ex", f"source {PLUGIN}", "-ex", f"help {name}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    return proc.stdout.strip()


def main():
    out_path = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "gdb-commands.md"
    if not ELF.exists():
        print(f"gen_gdb_commands_doc: {ELF} not built; run bash tools/build.sh", file=sys.stderr)
        return 2
    parts = [HEADER]
    for title, setup, shown in EXAMPLES:
        connect = title != "errors"
        parts.append(f"## {title}\n")
        name = title if title.startswith("arena") and " after " not in title else None
        if name:
            parts.append("```\n(gdb) help " + name + "\n" + help_text(name) + "\n```\n")
        setup_shown = [s for s in setup if s.startswith("set var")]
        if setup_shown or "continue &" in setup:
            parts.append("Set up with: " + ", ".join(f"`{s}`" for s in setup if not s.startswith("delete")) + "\n")
        for command, output in run(setup, shown, connect=connect) if shown else []:
            parts.append(f"```\n(gdb) {command}\n{output}\n```\n")
    parts.append(FOOTER)
    text = "\n".join(parts)
    text = re.sub(r"/tmp/[\w./-]+\.json", "/tmp/arena.json", text)
    # Source paths relative to the clone, wherever it is; a worktree's build may be a link to another clone's.
    for root in {ROOT, ELF.resolve().parents[2]}:
        text = text.replace(str(root) + "/", "")
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", "<UTC time>", text)  # when a snapshot was taken
    out_path.write_text(text)
    print(f"wrote {out_path}")
    return 0


HEADER = """# The `arena` GDB commands

<!-- Generated by tools/gen_gdb_commands_doc.py from the demo firmware on QEMU mps2-an386:
     edit the script, not this file. A test regenerates it and fails if it is stale. -->

The arenascope GDB plugin reads the agent's descriptor (docs/agent-abi.md) over any GDB
server: OpenOCD or pyOCD over SWD on a board, QEMU's gdbstub here. It never writes target
memory and never calls a function on the target. Every output below is real: the demo
firmware (`examples/demo`) stopped after its third inference unless said otherwise.

## Loading

- Once: `(gdb) source /path/to/arenascope/gdbplugin/arenascope.py`, or `gdb -x /path/to/arenascope/gdbplugin/arenascope.py`.
- Every session: put that `source` line in `~/.gdbinit`; or, for one project, in the project's
  `.gdbinit` and allow GDB to read it with `add-auto-load-safe-path /path/to/project` in `~/.gdbinit`.
- With the firmware's ELF (GDB's auto-load directory): GDB runs `SCRIPTS-DIR/ABSOLUTE/PATH/fw.elf-gdb.py`
  when it loads `/ABSOLUTE/PATH/fw.elf`. Create that file with the one line
  `gdb.execute("source /path/to/arenascope/gdbplugin/arenascope.py")`, and tell GDB where the
  directory is and that it is safe: `set auto-load scripts-directory SCRIPTS-DIR` and
  `add-auto-load-safe-path SCRIPTS-DIR` (in `~/.gdbinit`, or `-iex` on the command line).
  `tests/integration/test_plugin_gdb.py::test_auto_load_directory` does exactly this.

### After `pip install ./gdbplugin`

The package (`arenascope_plugin`, and the `arenascope` command) installs offline with Debian's
python3-venv, python3-pip, python3-setuptools and python3-wheel (`tools/setup-deps.sh`):

```sh
/usr/bin/python3 -m venv --system-site-packages ~/arenascope-venv     # sees Debian's setuptools, wheel, pyelftools
~/arenascope-venv/bin/pip install --no-build-isolation --no-index ./gdbplugin
~/arenascope-venv/bin/arenascope --version
# or a venv with nothing else in it: build the wheel with Debian's Python, install that
/usr/bin/python3 -m pip wheel --no-build-isolation --no-deps --no-index -w /tmp/wheels ./gdbplugin
/usr/bin/python3 -m venv ~/arenascope-venv && ~/arenascope-venv/bin/pip install --no-index /tmp/wheels/arenascope-*.whl
```

Optional extras: `arenascope[elf]` (pyelftools: the ELF's RAM sections for the descriptor scan)
and `arenascope[hex]` (intelhex: `.hex` RAM dumps). GDB's Python is not the venv's: Debian's GDB
embeds /usr/bin/python3's 3.11, which does not see a venv's site-packages. The stub, in
`~/.gdbinit` or with `-ex`, is two lines (the first only for a venv):

```
python import site; site.addsitedir("/home/me/arenascope-venv/lib/python3.11/site-packages")
python import arenascope_plugin.gdb as a; a.load()
```

or start GDB with `PYTHONPATH=~/arenascope-venv/lib/python3.11/site-packages` and use the second
line alone. `load()` loads once (a second load, or `source gdbplugin/arenascope.py` after it, says
`arenascope: already loaded`).

The package is the plugin and the standalone tool only: the planner (`arenascope-plan`, which
names regions from the model and predicts the arena) and the viewer are C++ programs that
`bash tools/build.sh` builds (and `cmake --install build` puts in bin/). Put them on PATH, or
name them: `set arena planner-path /path/to/arenascope-plan` and `set arena viewer-path ...` in
GDB, `--planner /path/to/arenascope-plan` to `arenascope`. Without the planner the commands say
so once a session, and the regions the model names are not named.

### From the firmware's ELF (`.debug_gdb_scripts`)

Opt in in the firmware: `#include "arenascope/gdb_autoload.h"` and, once at file scope in a file
the firmware links directly, `ARENASCOPE_GDB_AUTOLOAD();` (an inline script that imports the
installed package and calls `load()`), or `ARENASCOPE_GDB_SCRIPT_FILE("/path/to/arenascope/gdbplugin/arenascope.py");`
(a checkout, no install); or build the agent with `-DARENASCOPE_EMBED_GDB_SCRIPT=1` (CMake option
`ARENASCOPE_EMBED_GDB_SCRIPT=ON`). The entry lives in the non-allocated section
`.debug_gdb_scripts`: no flash, no RAM, kept by `--gc-sections`. GDB runs it only from a trusted
path, the ELF's folder for the inline script, the script's folder for a file entry:

```
gdb-multiarch -iex "add-auto-load-safe-path /path/to/build" /path/to/build/fw.elf
(gdb) info auto-load python-scripts     # Yes  arenascope
(gdb) arena version
```

(`add-auto-load-safe-path` in `~/.gdbinit` does the same for every session; `show auto-load
safe-path` lists what is trusted.) Elsewhere GDB prints its own warning, "auto-loading has been
declined by your `auto-load safe-path'", and loads nothing. When GDB's Python cannot import the
package the inline script says so in one line. `tests/integration/test_python_package.py` runs
all of this.

Needs GDB with Python 3 (Debian's `gdb`, `gdb-multiarch`); standard library only, plus
pyelftools (Debian `python3-pyelftools`) to read the ELF's RAM sections for the descriptor scan.

## Settings

| setting | default | meaning |
|---|---|---|
| `set arena colour on\\|off\\|auto` | auto | colour (auto: follow GDB's `set style enabled`); off prints plain letters in the map (`T` head, `t` temp, `.` free, `P` persistent, `m` metadata, `g` guard, `X` damage) |
| `set arena descriptor-address ADDR` | auto | where the descriptor is, when it has no symbol (`auto`: by symbol `arenascope_descriptor`, else by a RAM scan) |
| `set arena scan-range START END` | auto | where to scan for the magic (`auto`: the loaded ELF's writable sections; a scan reads through the probe, keep it small) |
| `set arena stack-range LOW HIGH` (or `LOW, HIGH`) | auto | stack bounds (`auto`: the descriptor's, else linker symbols `__StackLimit/__StackTop`, `_sstack/_estack`, ...) |
| `set arena memory NAME START END[; ...]` | none | memory the target has beyond the ELF's sections (external RAM an arena or interpreter is allocated in), named in every answer; GDB's memory map (`info mem`) is read too (docs/integrating-tflm.md, "External RAM") |
| `set arena canary-pattern WORD` | auto | canary word for host scans (`auto`: the descriptor's, 0xAAAAAAAA) |
| `set arena stack-paint-pattern WORD` | auto | stack paint word for host scans (`auto`: the descriptor's, 0xCCCCCCCC) |
| `set arena view-port N` | 47800 | the loopback port `arena view` serves snapshots on |
| `set arena viewer-path PATH` | auto | the viewer `arena view` starts (auto: `build/viewer/arenascope-viewer` beside the plugin, then PATH) |
| `set arena planner-path PATH` | auto | the planner tool `arena plan --model` runs (auto: `build/planner/arenascope-plan` beside the plugin, then PATH) |
| `set arena model FILE` | (empty) | agentless mode: the `.tflite` the firmware runs, when its model is not a data symbol of the ELF (empty: read it from the ELF; docs/integrating-tflm.md) |
| `set arena live-via LINK` | auto | how `arena live` reads the running core: `tcl:HOST:PORT` (OpenOCD's Tcl RPC port) or `gdb:HOST:PORT` (a second connection to the GDB server: OpenOCD, J-Link, ST-LINK, pyOCD); auto: by the server GDB is attached to, found on this machine (OpenOCD: its Tcl port from its command line; others: their GDB port; QEMU's gdbstub: none), else OpenOCD's Tcl port 6666 on GDB's remote host, then its GDB port (docs/hardware.md) |
| `set arena link-timeout S` | 3 | seconds each request of `arena live`'s link must be answered in, whatever the server sends meanwhile (0.1 to 600); when it passes, the error says what the server did (answered nothing, flooded the link, stalled) and the next refresh asks again (docs/hardware.md, "What a bad server gets") |
| `set arena fault-sp EXPR` | auto | where the fault handler saved the stack pointer at the fault (a variable or an address), for `arena fault` when the core is halted inside the handler and LR no longer holds EXC_RETURN (auto: the common names `g_fault_sp`, `fault_sp`, `g_hardfault_sp`, `hardfault_sp`, `HardFault_SP`, `g_stacked_sp`, `stacked_sp`) |
| `set arena debug on\\|off` | off | show Python tracebacks of internal errors (for bug reports) |

Values are checked when set: a bad one is refused with the reason, and the old one kept.
Expressions (addresses, ranges, `arena whereis`, `arena attach`) are refused when they could
write target memory (`x++`, `x = 1`, `x <<= 1`) or call a target function (`f()`, `(f)(1)`: GDB's
`may-call-functions` is off while arenascope evaluates): arenascope only reads. An array, a
function or an object names its address; a byte-sized value held in memory is refused with the
`&(...)` to give instead.

`show arena` lists them. Units: bytes unless shown; offsets (`+N`) are from the arena's base.
Every setting is declared once (`gdbplugin/arenascope_plugin/settings_table.py`) and is an option
of the standalone tool too, with the same default and refused with the same words: `--NAME VALUE`
(`--planner` for planner-path, `--via` for live-via; `arenascope --help` lists them).

## Which figures are measured when

- `arena info` uses the agent's own measurement from its last `arenascope_measure()` and re-reads
  only the guard band (cheap: under 400 bytes a refresh on Cortex-M). When the guard band has
  changed since the agent measured (a fault overtook it), it re-measures everything and says the
  agent's figures were stale. `arena check`, `arena map`, `arena stack`, `arena whereis` and
  `arena snapshot` always re-read the region table, the guard band, the free bands and the
  stack from target memory.
- Headroom is an upper estimate until the planner tool gives the model's minimum arena: TFLM
  needs more than `arena_used_bytes()` while it allocates (hello_world int8 on a Cortex-M4:
  676 B used, 1068 B needed). Never shrink the arena on the used bytes alone.
- In batch mode `arena check` ends with an error when a rule fails, so `gdb -batch ... -ex 'arena check'`
  exits non-zero (GDB's batch exit status is that of its last command: put the check last).
  Interactively, or in a sourced script, it prints the verdicts and goes on (`--strict` makes a
  FAIL an error there too).
"""  # noqa: E501 - Markdown: a table row and a list item are one line each

FOOTER = """## The snapshot

`arena snapshot FILE` writes the JSON described in [snapshot-schema.md](snapshot-schema.md):
every figure above, the regions, the plan's live-bytes curve and lower bound, the stack, the
guard band and every check verdict. The viewer draws it without recomputing anything.
"""

if __name__ == "__main__":
    sys.exit(main())
