"""Test harness: real QEMU (mps2-an386) and real gdb-multiarch / gdb, started per test.

Everything expected is computed here or in the tests from independent sources: the ELF's
symbol table (pyelftools), the linker map, the hand-written ABI fixture and, when
../shared is present, the real TFLM figures. The demo's arena layout is the planner's
prediction for the demo's model (DEMO_PLAN: arenascope-plan --json, checked against real TFLM
in test_planner_models.py); the firmware tests check the firmware publishes exactly that.
"""
import contextlib
import json
import os
import pathlib
import re
import shutil
import socket
import struct
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("ARENASCOPE_BUILD_DIR", ROOT / "build"))
# Every snapshot a plugin or tool run writes in these tests is checked against
# docs/snapshot-schema.json before it is written (present/snapshot.write_snapshot_file).
os.environ.setdefault("ARENASCOPE_VALIDATE_SNAPSHOTS", "1")
FIRMWARE = BUILD / "firmware" / "demo_fw.elf"
FIRMWARE_MAP = BUILD / "firmware" / "demo_fw.map"
HOST_DEMO = BUILD / "examples" / "demo" / "host" / "demo_host"
ABI = json.loads((ROOT / "target_agent" / "abi" / "agent_abi_v1.json").read_text())
PROBE = pathlib.Path(__file__).with_name("gdb_probe.py")
SHARED = ROOT.parent / "shared"
TFLM_FIGURES = SHARED / "tflm-figures" / "tflm-figures.json"
PLANNER = BUILD / "planner" / "arenascope-plan"
# The model the demo firmware was built for: the build's ARENASCOPE_DEMO_MODEL, else the DS-CNN.
_CACHE = BUILD / "CMakeCache.txt"
_DEMO_SET = re.search(r"^ARENASCOPE_DEMO_MODEL:FILEPATH=(.+)$", _CACHE.read_text(), re.M) if _CACHE.exists() else None
DEMO_MODEL = pathlib.Path(_DEMO_SET.group(1)) if _DEMO_SET else BUILD / "planner" / "dscnn_kws.tflite"
DEMO_IS_DSCNN = DEMO_MODEL.name == "dscnn_kws.tflite"


AGENT = ROOT / "target_agent"
# The agent and its Cortex-M fault port, as a test's own firmware links them.
AGENT_SOURCES = [AGENT / "src" / "arenascope_agent.c", AGENT / "src" / "arenascope_fault.c",
                 AGENT / "ports" / "cortex_m" / "arenascope_fault_port.c",
                 AGENT / "ports" / "cortex_m" / "arenascope_fault_hook.c",
                 AGENT / "ports" / "cortex_m" / "arenascope_stack_paint.S"]


def cortex_m_elf(out, cpu, script, sources, flags=()):
    """Builds a test's own bare-metal firmware with the agent: arm-none-eabi-gcc for `cpu`, soft
    float, -Os -g, warnings as errors, linker script `script`; flags: more options (-D, -I, -L)."""
    subprocess.run(["arm-none-eabi-gcc", f"-mcpu={cpu}", "-mthumb", "-mfloat-abi=soft", "-Os", "-g", *flags,
                    "-ffunction-sections", "-fdata-sections", "-nostartfiles", "--specs=nano.specs", "-Wall",
                    "-Wextra", "-Werror", f"-I{AGENT / 'include'}", f"-I{AGENT / 'ports' / 'cortex_m'}",
                    "-T", str(script), *map(str, sources), *map(str, AGENT_SOURCES), "-o", str(out)],
                   check=True, capture_output=True, timeout=180)
    return out

def plan_json(*options):
    """The planner's JSON (`arenascope-plan --json --target cortex-m OPTIONS`) for the demo's model."""
    r = subprocess.run([str(PLANNER), "--json", "--target", "cortex-m", *options, str(DEMO_MODEL)],
                       capture_output=True, text=True, timeout=60, check=True)
    return json.loads(r.stdout)


def demo_plan():
    """The planner's prediction for the demo's model (cortex-m, margin 15 % as the build asks
    for it: CMakeLists.txt): the layout the firmware uses."""
    return plan_json("--margin", "15")


def demo_output_overrun(plan):
    """Scenario 2's target (examples/demo/workload.c): the first operator whose output tensor
    ends at the head's end; returns that buffer."""
    head = plan["plans"]["tflm-greedy"]["head_bytes"]
    ends = [b for b in plan["buffers"] if b["tensor"] >= 0 and b["offset"] + b["size"] == head and b["first"] >= 1]
    return min(ends, key=lambda b: b["first"])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# QEMU's RV32 machine as every RISC-V test boots it: qemu()'s machine, system and extra.
RV32_VIRT = {"machine": "virt", "system": "qemu-system-riscv32", "extra": ("-bios", "none")}
RV32_SETUP = "tools/setup-deps.sh installs gcc-riscv64-unknown-elf, picolibc-riscv64-unknown-elf, qemu-system-misc"


def rv32_firmware_skip(elf):
    """The skip mark of a test that boots the built RV32 firmware `elf` on RV32_VIRT."""
    import pytest  # pylint: disable=import-outside-toplevel  (the harness is also used without pytest)
    return pytest.mark.skipif(not elf.exists() or not shutil.which("qemu-system-riscv32"),
                              reason=f"{elf} not built or no qemu-system-riscv32 ({RV32_SETUP}; then bash "
                                     "tools/build.sh)")


@contextlib.contextmanager
def qemu(elf=FIRMWARE, semihosting=False, machine="mps2-an386", system="qemu-system-arm", extra=()):
    """Starts QEMU halted at reset with its gdbstub on a free loopback port; always kills it.
    semihosting: for firmware whose C library talks to the host (newlib's rdimon); machine:
    QEMU's board (mps2-an386: Cortex-M4, mps3-an547: Cortex-M55, ...); system: the QEMU binary
    (qemu-system-riscv32 for `-M virt`), extra: more of its options (`-bios none`)."""
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="qemu-", suffix=".log", delete=False)
    # QEMU itself, not under `timeout`: killing a `timeout` wrapper would leave QEMU running.
    proc = subprocess.Popen(
        [system, "-M", machine, *extra, "-kernel", str(elf), "-nographic",
         "-monitor", "none", "-S", "-gdb", f"tcp:127.0.0.1:{port}",
         *(["-semihosting-config", "enable=on,target=native"] if semihosting else [])],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        # No probe connection: QEMU's gdbstub takes the first client, and when it leaves the
        # guest starts running. GDB itself retries the connection (gdb_batch: tcp auto-retry).
        yield port, pathlib.Path(log.name)
    finally:
        proc.kill()
        proc.wait()
        os.unlink(log.name)


def _display_free(n):
    """Whether display :n can be taken: no lock, or a stale one (its server is gone, as after a
    killed test run), whose lock and socket are then removed."""
    lock, sock = f"/tmp/.X{n}-lock", f"/tmp/.X11-unix/X{n}"
    try:
        with open(lock, encoding="ascii") as f:
            pid = int(f.read().strip())
    except FileNotFoundError:
        return not os.path.exists(sock)
    except (OSError, ValueError):
        return False
    try:
        os.kill(pid, 0)
        return False
    except ProcessLookupError:
        pass
    except PermissionError:
        return False
    for path in (lock, sock):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    return True


@contextlib.contextmanager
def xvfb(width=1280, height=800):
    """A private Xvfb server (Mesa renders into it); yields an environment with its DISPLAY.
    One server per test module: xvfb-run -a races when runs start together. Stopped with SIGTERM,
    so that it removes its lock and socket (SIGKILL left them, and enough of them used up every
    display number a test may take)."""
    number = next(n for n in range(120, 400) if _display_free(n))
    proc = subprocess.Popen(["Xvfb", f":{number}", "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        import time
        deadline = time.time() + 20
        while not os.path.exists(f"/tmp/.X11-unix/X{number}") and time.time() < deadline:
            time.sleep(0.05)
        yield dict(os.environ, DISPLAY=f":{number}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def gdb_batch(elf, commands, reads=(), remote_port=None, gdb="gdb-multiarch", timeout=90, args=()):
    """Runs GDB in batch mode on elf (over the remote protocol when remote_port is given, else
    as a local process with args), runs commands, then dumps `reads` (see gdb_probe.py).
    Returns (dump dict, GDB's output)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "probe.json"
        ex = []
        if remote_port is not None:
            ex += ["-ex", "set tcp auto-retry on", "-ex", "set tcp connect-timeout 15",
                   "-ex", f"target remote 127.0.0.1:{remote_port}"]
        for c in commands:
            ex += ["-ex", c]
        ex += ["-ex", f'python probe_dump("{out}")', "-ex", "kill"]
        cmd = [gdb, "-q", "-nx", "-batch", "-x", str(PROBE)] + ex
        cmd += [str(elf)] if remote_port is not None else ["--args", str(elf), *args]
        env = dict(os.environ, PROBE_READS=json.dumps([list(r) for r in reads]))
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              stdin=subprocess.DEVNULL)
        text = proc.stdout + proc.stderr
        assert out.exists(), f"GDB did not reach the probe:\n{text}"
        return json.loads(out.read_text()), text


# What no plugin command may print (an unread memory error, a Python traceback).
BAD_OUTPUT = re.compile(r"cannot read|Cannot access memory|Traceback|Python Exception|internal error", re.I)


def figure(text, label):
    """The bytes a report line `LABEL:   N B` gives (`arena info`'s figures)."""
    m = re.search(rf"^\s*{re.escape(label)}:\s+(\d+) B", text, re.M)
    assert m, f"no '{label}' in:\n{text}"
    return int(m.group(1))


def info_register(registers, name):
    """A register's value as GDB's `info registers` printed it."""
    m = re.search(rf"^{name}\s+(0x[0-9a-f]+)\s", registers, re.M)
    assert m, registers
    return int(m.group(1), 16)


def fnv1a(data):
    """FNV-1a, 32 bits: the agent's region checksum (target_agent/src/arenascope_fault.c), computed
    here apart from the plugin's."""
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def fault_register(fault, name):
    """The value of the register `name` in a snapshot's or --json's fault (version 3's list), or
    None when the fault does not list it (not known, or not valid)."""
    return next((r["value"] for r in fault.get("registers") or [] if r["name"] == name), None)


def real_elf(variable, what):
    """The hand-built firmware the environment variable names (the optional real-TFLM tests), or
    the test is skipped cleanly, saying which variable names no `what`."""
    import pytest  # pylint: disable=import-outside-toplevel  (the harness is also used without pytest)
    path = os.environ.get(variable)
    if not path or not pathlib.Path(path).exists():
        pytest.skip(f"{variable} names no {what} (optional test)")
    return pathlib.Path(path)


def plugin_at_stops(elf, stops, commands, planner_path=None, timeout=180, first=(), **machine):
    """Boots `elf` on QEMU with semihosting (machine: qemu()'s machine, system and extra; default
    mps2-an386), loads the plugin (planner: `planner_path`, default the build's), runs `first` at
    reset and, at each breakpoint of `stops` in turn, runs `commands`; asserts no command printed
    BAD_OUTPUT and returns GDB's output (the real-TFLM tests' one session)."""
    steps = [f"source {ROOT / 'gdbplugin' / 'arenascope.py'}", f"set arena planner-path {planner_path or PLANNER}",
             "set arena colour off", *first]
    for stop in stops:
        steps += [f"break {stop}", "continue", *commands]
    with qemu(elf, semihosting=True, **machine) as (port, _):
        _, text = gdb_batch(elf, steps, remote_port=port, timeout=timeout)
    assert not BAD_OUTPUT.search(text), text
    return text


def elf_symbols(elf):
    """Symbol name -> address from the ELF's own symbol table (pyelftools)."""
    from elftools.elf.elffile import ELFFile
    with open(elf, "rb") as f:
        e = ELFFile(f)
        return {s.name: s["st_value"] for s in e.get_section_by_name(".symtab").iter_symbols() if s.name}


def map_sections(map_path):
    """Output section name -> (address, size) from a GNU ld map file."""
    sections = {}
    pattern = re.compile(r"^(\.[\w.]+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)", re.M)
    for name, addr, size in pattern.findall(pathlib.Path(map_path).read_text()):
        sections.setdefault(name, (int(addr, 16), int(size, 16)))
    return sections


_FMT = {"u8": "B", "u16": "H", "u32": "I", "i16": "h"}


def decode(type_name, data, addr_size, offset=0):
    """Decodes one ABI struct from bytes at the fixture's offsets (test-side, independent of
    the agent's code and of the plugin's decoder)."""
    layout = ABI["layouts"][str(addr_size)]
    out = {}
    for field, ftype in ABI["types"][type_name]:
        at = offset + layout[type_name][field]
        if ftype == "addr":
            out[field] = struct.unpack_from("<Q" if addr_size == 8 else "<I", data, at)[0]
        elif ftype == "char[8]":
            out[field] = data[at:at + 8]
        elif ftype == "band":
            out[field] = decode("band", data, addr_size, at)
        elif ftype == "arena[]":
            out[field] = [decode("arena", data, addr_size, at)]
        else:
            out[field] = struct.unpack_from("<" + _FMT[ftype], data, at)[0]
    return out


def decode_fault_record(data, addr_size):
    """Decodes the agent's fault record at the fixture's offsets ("fault_record"; test-side,
    independent of the plugin's decoder). Adds "_checksum_ok" (the fixture's checksum rule)."""
    fixture = ABI["fault_record"]
    layout = fixture["layouts"][str(addr_size)]
    fmt = {"u16": "<H", "u32": "<I", "u32[8]": "<8I", "addr": "<Q" if addr_size == 8 else "<I"}
    out = {}
    for field, ftype in fixture["fields"]:
        v = struct.unpack_from(fmt[ftype], data, layout[field])
        out[field] = list(v) if ftype == "u32[8]" else v[0]
    end = layout["checksum"]
    h = 2166136261
    for b in data[fixture["checksummed_from"]:end]:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    out["_checksum_ok"] = out["checksum"] == h
    return out


def dwarf_layout(elf, type_name, fields, gdb="gdb-multiarch"):
    """{field: offset, "_size": bytes} of a struct as the compiler laid it out, from the ELF's
    debug info (GDB, no target needed)."""
    ex = []
    for f in fields:
        ex += ["-ex", f"print/d (unsigned long)&(({type_name} *)0)->{f}"]
    ex += ["-ex", f"print/d sizeof({type_name})"]
    proc = subprocess.run([gdb, "-q", "-nx", "-batch", *ex, str(elf)], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    values = [int(v) for v in re.findall(r"^\$\d+ = (\d+)$", proc.stdout, re.M)]
    assert len(values) == len(fields) + 1, proc.stdout + proc.stderr
    return {**dict(zip(fields, values[:-1], strict=True)), "_size": values[-1]}


def decode_regions(data, count):
    return [decode("region", data, 4, 16 * i) for i in range(count)]
