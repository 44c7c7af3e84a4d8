"""The `arena` commands and `set/show arena ...` settings (GDB side). Each command gathers the
figures through the layers below (target -> session -> decode -> analysis) and prints them with
render; every error becomes one line `arena CMD: what happened, where, what to do`."""
import argparse
import os
import subprocess
import time
import traceback

import gdb  # pylint: disable=import-error

from arenascope_plugin.decode import abi, faultrecord, tflmstate
from arenascope_plugin.analyse import agentless, figures, postmortem
from arenascope_plugin.serve import viewerlink
from arenascope_plugin.acquire import planner
from arenascope_plugin import paths, version
from arenascope_plugin.present import render, snapshot, style
from arenascope_plugin.decode.descriptor import MAX_STACK_BYTES, Band, DecodeError
from arenascope_plugin.decode.locate import NotFoundError, locate, scan
from arenascope_plugin.acquire.reader import MemoryReadError
from arenascope_plugin.decode.session import DescriptorSession, TornReadError
from arenascope_plugin.acquire.gdbtarget import _SIDE_EFFECT, STACK_SYMBOLS, GdbReader, TargetError, batch_mode, check_readable, elf_ram_ranges, parse_address, register, where, stack_symbols, symbol_address

EXPECTED = (TargetError, DecodeError, MemoryReadError, TornReadError, NotFoundError, viewerlink.LiveError)


# ----------------------------------------------------------------------------- settings

class _Setting(gdb.Parameter):
    """A `set arena NAME` / `show arena NAME` parameter."""

    def __init__(self, name, kind, default, doc, show_doc):
        self.__doc__ = doc
        self.set_doc = f"Set {show_doc}."
        self.show_doc = f"Show {show_doc}."
        super().__init__(f"arena {name}", gdb.COMMAND_DATA, kind)
        self.value = default
        self._name = name
        self._good = default

    def get_set_string(self):
        """Checks the new value when it is set; a bad one is refused and the old one kept."""
        value = self.value
        if isinstance(value, str):
            value = value.strip() or "auto"
            self.value = value
        problem = _setting_problem(self._name, value)
        if problem:
            self.value = self._good
            raise gdb.GdbError(f"set arena {self._name}: {problem}; kept {self._good!r}")
        self._good = self.value
        return ""

    def get_show_string(self, svalue):
        return f"arena {self._name}: {svalue}"


def _split_range(text):
    """'START END' or 'START, END' (use the comma when an expression has spaces)."""
    parts = [p.strip() for p in (text.split(",") if "," in text else text.split())]
    return parts if len(parts) == 2 and all(parts) else None


def _setting_problem(name, value):
    """Why a setting's new value is unusable, or None. Expressions are checked for form here and
    evaluated when used (they may need a running target); two plain numbers are checked for order."""
    if name == "view-port" and not 1 <= int(value) <= 65535:
        return f"{value} is not a TCP port: use 1..65535"
    if not isinstance(value, str) or value == "auto":
        return None
    if name in ("stack-range", "scan-range") and _split_range(value):
        try:
            lo, hi = (int(x, 0) for x in _split_range(value))
        except ValueError:
            lo = hi = None  # expressions: checked when used
        if lo is not None and hi <= lo:
            return f"the end {hi:#x} is not above the start {lo:#x}"
    if name == "model" and value and not os.path.isfile(os.path.expanduser(value)):
        return f"{value!r} is not a regular file" if os.path.exists(os.path.expanduser(value)) else \
            f"there is no file {value!r}; give the .tflite the firmware was built with, or auto"
    if name in ("canary-pattern", "stack-paint-pattern"):
        try:
            number = int(value, 0)
        except ValueError:
            return f"{value!r} is not a number; give a 32-bit word like 0xAAAAAAAA, or auto"
        if not 0 <= number <= 0xFFFFFFFF:
            return f"{value} does not fit in 32 bits"
    if name in ("stack-range", "scan-range") and _split_range(value) is None:
        return f"{value!r}: expected 'START END' (or 'START, END' when an expression has spaces), or auto"
    if name in ("viewer-path", "planner-path"):
        path = os.path.expanduser(value)
        if not os.path.isfile(path) or not os.access(path, os.X_OK):
            return f"{value!r} is not an executable file; give the full path, or auto"
    if name in ("stack-range", "scan-range", "descriptor-address"):
        for part in _split_range(value) or [value]:
            if _SIDE_EFFECT.search(part):
                return f"{part!r} could write target memory or call a target function"
    return None


class _SetArena(gdb.Command):
    """Settings of the arenascope plugin: `set arena NAME VALUE` (see `show arena`)."""

    def __init__(self):
        super().__init__("set arena", gdb.COMMAND_DATA, prefix=True)

    def invoke(self, arg, from_tty):
        gdb.execute("help set arena")


class _ShowArena(gdb.Command):
    """Show the arenascope plugin's settings: `show arena` lists them all."""

    def __init__(self):
        super().__init__("show arena", gdb.COMMAND_DATA, prefix=True)

    def invoke(self, arg, from_tty):
        for name, param in SETTINGS.items():
            value = param.value
            if isinstance(value, bool) or value is None:
                value = "auto" if value is None else "on" if value else "off"
            gdb.write(f"arena {name}: {value}\n")


SETTINGS = {}
# Globals a fault handler commonly saves the stacked frame's address in (MSP or PSP at entry).
FAULT_SP_SYMBOLS = ("g_fault_sp", "fault_sp", "g_hardfault_sp", "hardfault_sp", "HardFault_SP", "g_stacked_sp",
                    "stacked_sp")


def _register_settings():
    _SetArena()
    _ShowArena()
    specs = [
        ("colour", gdb.PARAM_AUTO_BOOLEAN, None,
         "Colour in the arena commands' output: on, off, or auto (follow `set style enabled`). Off: plain letters "
         "in the map.", "whether arena output uses colour"),
        ("canary-pattern", gdb.PARAM_STRING, "auto",
         "Canary word for host-side scans: 'auto' uses the descriptor's (0xAAAAAAAA by default), or a 32-bit number.",
         "the canary word"),
        ("stack-paint-pattern", gdb.PARAM_STRING, "auto",
         "Stack paint word for host-side stack scans: 'auto' uses the descriptor's (0xCCCCCCCC), or a 32-bit number.",
         "the stack paint word"),
        ("stack-range", gdb.PARAM_STRING, "auto",
         "Stack bounds 'LOW HIGH' (addresses or expressions) overriding the descriptor and the linker symbols; "
         "'auto' to clear.", "the stack range override"),
        ("descriptor-address", gdb.PARAM_STRING, "auto",
         "Address (or expression) of the arenascope descriptor, when it has no symbol; 'auto' finds it by "
         "symbol, else by scanning.", "the descriptor address override"),
        ("scan-range", gdb.PARAM_STRING, "auto",
         "RAM range 'START END' to scan for the descriptor's magic when it has no symbol; 'auto' scans the "
         "loaded ELF's writable sections. Scans read through the probe: keep it small.", "the descriptor scan range"),
        ("view-port", gdb.PARAM_ZUINTEGER, 47800,
         "Loopback TCP port `arena view` serves snapshots on (the viewer reconnects to it when GDB comes back).",
         "the live view port"),
        ("viewer-path", gdb.PARAM_STRING, "auto",
         "The viewer executable `arena view` starts: 'auto' looks for build/viewer/arenascope-viewer beside this "
         "plugin, then arenascope-viewer on PATH.", "the viewer executable"),
        ("model", gdb.PARAM_STRING, "",
         "Agentless mode: the .tflite file the firmware runs, when its model is not an array symbol of the ELF "
         "(empty: read the model from the ELF).", "the model file for agentless mode"),
        ("planner-path", gdb.PARAM_STRING, "auto",
         "The planner tool `arena plan --model` runs: 'auto' looks for build/planner/arenascope-plan beside this "
         "plugin, then arenascope-plan on PATH.", "the planner tool"),
        ("openocd", gdb.PARAM_STRING, "auto",
         "OpenOCD's Tcl RPC port for `arena live`, HOST:PORT: 'auto' takes the OpenOCD GDB is attached to (its "
         "command line's tcl_port when it runs on this machine), else port 6666 on GDB's remote host.",
         "OpenOCD's Tcl port for the live view"),
        ("fault-sp", gdb.PARAM_STRING, "auto",
         "Where the fault handler saved the stack pointer at the fault (an expression: a variable, or an "
         "address), for `arena fault` when the core is halted inside the handler and LR no longer holds "
         "EXC_RETURN; 'auto' tries the common names (" + ", ".join(FAULT_SP_SYMBOLS) + ").",
         "the fault handler's saved stack pointer"),
        ("debug", gdb.PARAM_BOOLEAN, False, "Show Python tracebacks of internal errors (for bug reports).",
         "whether internal errors show tracebacks"),
    ]
    for name, kind, default, doc, show in specs:
        SETTINGS[name] = _Setting(name, kind, default, doc, show)


def setting(name):
    return SETTINGS[name].value


def _word_setting(name, fallback):
    text = str(setting(name)).strip()
    if text in ("", "auto"):
        return fallback
    try:
        value = int(text, 0)
    except ValueError:
        raise TargetError(f"`set arena {name}` is {text!r}: expected 'auto' or a 32-bit number like 0xAAAAAAAA") \
            from None
    return value & 0xFFFFFFFF


def _range_setting(name):
    text = str(setting(name)).strip()
    if text in ("", "auto"):
        return None
    parts = _split_range(text)
    if parts is None:
        raise TargetError(f"`set arena {name}` is {text!r}: expected 'START END' (two addresses) or 'auto'")
    lo, hi = (parse_address(p) for p in parts)
    if hi <= lo:
        raise TargetError(f"`set arena {name}`: end {hi:#x} is not above start {lo:#x}")
    return lo, hi


# ----------------------------------------------------------------------------- gathering

_SESSIONS = {}
_WARNED = set()  # warnings said since the target last stopped (each is said once a stop)
_SAID = set()    # warnings said once a session (a missing tool)


def _forget(_event=None):
    _SESSIONS.clear()
    _WARNED.clear()


def _warn_once(key):
    """True the first time `key` is asked since the target last stopped."""
    if key in _WARNED:
        return False
    _WARNED.add(key)
    return True


class Context:
    """What one command invocation knows: the descriptor (or None), figures and stack."""

    def __init__(self):
        self.reader = GdbReader()
        self.desc = None
        self.located_by = None
        self.figs = {}
        self.stack = None
        self.seq_odd = False
        self.note = None
        self.stale = []
        self.stack_source = "the descriptor"
        self.minimum_arena = None  # the planner's minimum arena, when it holds for this firmware
        self.descriptor_error = None  # why the agent's descriptor was not used (corrupt), in agentless mode
        self.tflm = None    # agentless: the interpreter's tflmstate.State
        self.plan = None    # agentless: the planner's JSON for the model (with its replay at this size)
        self.facts = None   # agentless: the ELF's tflmstate.Facts
        self.halt = None    # where the core is stopped (halt_of): one unwind a command
        self.verdicts = None  # (fault, [postmortem.Verdict]) computed for it (tflm_verdicts)


def _scan_ranges():
    """(ranges, their source, why empty) for a descriptor scan."""
    user_range = _range_setting("scan-range")
    if user_range:
        return [(user_range[0], user_range[1], "scan-range")], "`set arena scan-range`", ""
    ranges, why = elf_ram_ranges()
    return ranges, "the ELF's RAM sections", why


def _session(ctx, address):
    key = (gdb.selected_inferior().num, address)
    if key not in _SESSIONS:
        ram = [(lo, hi) for lo, hi, _ in elf_ram_ranges()[0]] or None
        _SESSIONS[key] = DescriptorSession(ctx.reader, address, ram_ranges=ram)
    session = _SESSIONS[key]
    session.reader = ctx.reader
    return session


def _warn_candidates(text):
    """A scan found several descriptors (or one that looks like a copy): said once a stop."""
    if _warn_once("descriptor-candidates"):
        gdb.write(f"arena: warning: {text}\n")


def _find_descriptor(ctx, fresh_tables=False):
    override = None
    text = str(setting("descriptor-address")).strip()
    if text not in ("", "auto"):
        override = parse_address(text)
    symbol = None if override is not None else symbol_address("arenascope_descriptor")
    if override is None and symbol is None:
        ranges, source, why = _scan_ranges()
        address, how = locate(ctx.reader, ranges=ranges, range_source=source, why_no_ranges=why,
                              warn=_warn_candidates)
    else:
        address, how = locate(ctx.reader, override=override, symbol=symbol)
    try:
        ctx.desc = _session(ctx, address).read(fresh_tables=fresh_tables)
    except DecodeError as exc:
        if symbol is None or "magic is" not in str(exc):
            raise
        # The ELF's symbol holds no descriptor: the agent has not run arenascope_init yet, or the
        # loaded ELF is not the firmware that runs. A scan tells which.
        ranges, source, _ = _scan_ranges()
        found, _, several = scan(ctx.reader, [r for r in ranges if not r[0] <= address < r[1]] +
                                 [(lo, address, n) for lo, hi, n in ranges if lo <= address < hi] +
                                 [(address + 8, hi, n) for lo, hi, n in ranges if lo <= address < hi]) \
            if ranges else (None, [], None)
        if several:
            _warn_candidates(f"scanning {source}: {several}")
        if found is None:
            raise DecodeError(f"{exc}; or the loaded ELF does not match the running firmware") from None
        gdb.write(f"arena: warning: the ELF's symbol arenascope_descriptor is at {address:#x} but the descriptor "
                  f"is at {found:#x}: the loaded ELF does not match the running firmware (load the right one "
                  "with `file`)\n")
        address, how = found, f"magic found by scanning {source}; the ELF's symbol is stale"
        ctx.desc = _session(ctx, address).read(fresh_tables=fresh_tables)
    ctx.located_by = how
    ctx.seq_odd = ctx.desc.halted_in_update


def _read_chunked(reader, addr, length):
    out = bytearray()
    while len(out) < length:
        out += reader.read(addr + len(out), min(4096, length - len(out)))
    return bytes(out)


def _scan_stack(reader, low, high, pattern):
    """(high-water mark, painted) by a host scan of [low, high): the lowest address whose word lost
    the paint (high if none), and whether any painted word is left at all (False: never painted,
    e.g. halted before the reset handler ran, or overflowed through every word)."""
    if high - low > MAX_STACK_BYTES:
        raise TargetError(f"stack {low:#x}-{high:#x} is {high - low} B; scanning more than {MAX_STACK_BYTES >> 20} MiB "
                          "through a probe takes too long: check `set arena stack-range` or the descriptor")
    data = _read_chunked(reader, low, high - low)
    lo, _ = figures.changed_range(data, pattern)
    painted = pattern.to_bytes(4, "little") in data[: len(data) // 4 * 4]
    return (high if lo == abi.NONE else low + lo), painted


def _verify_bands(ctx, which=("guard", "free")):
    """Re-measures bands from target memory now (the agent's figures are from its last
    arenascope_measure, which a fault may have overtaken). Returns the names of the bands whose
    figures changed."""
    desc = ctx.desc
    pattern = _word_setting("canary-pattern", desc.canary_pattern)
    bands = ([("guard band", desc.guard)] if "guard" in which else []) + \
            ([(f"arena {a.index} free band", a.canary) for a in desc.arenas] if "free" in which else [])
    changed = []
    for name, band in bands:
        if band.filled:
            before = (band.touched_lo, band.touched_hi)
            band.touched_lo, band.touched_hi = figures.changed_range(
                _read_chunked(ctx.reader, band.low_addr, band.size), pattern)
            if desc.agent_measured and before != (band.touched_lo, band.touched_hi):
                changed.append(name)
    return changed


def gather(need_descriptor=True, verify=False):
    """Reads everything a command needs. verify: re-read the region tables and re-measure the bands
    and the stack from target memory instead of trusting the agent's last measurement (check, map,
    stack, whereis, snapshot). Without verify only the guard band is re-read (it is small), so a
    stale agent measurement is noticed."""
    check_readable()
    ctx = Context()
    try:
        if agentless.attached():
            raise NotFoundError("`arena attach` named a MicroInterpreter")
        _find_descriptor(ctx, fresh_tables=verify)
        planner = _tool_path("planner-path", "planner", "arenascope-plan")
        if planner is None and any(a.model_addr for a in ctx.desc.arenas) and "planner" not in _SAID:
            _SAID.add("planner")
            gdb.write("arena: warning: the planner tool arenascope-plan was not found (not at "
                      "build/planner/arenascope-plan beside the plugin, nor on PATH): the regions are not named from "
                      "the model; build it (bash tools/build.sh) or `set arena planner-path /path/to/arenascope-plan`"
                      "\n")
        if any(a.flags & abi.ARENA_FLAG_PLANNER_IDS for a in ctx.desc.arenas):  # the TFLM adapter's arena
            for w in agentless.label_planner_ids(ctx.reader, ctx.desc, planner):
                gdb.write(f"arena: warning: {w}\n")
        if any(a.model_addr and not a.flags & abi.ARENA_FLAG_PLANNER_IDS for a in ctx.desc.arenas):
            for w in agentless.label_from_model(ctx.reader, ctx.desc, planner):  # names from the model
                gdb.write(f"arena: warning: {w}\n")
        if not ctx.desc.arenas and agentless.tflm_in_elf():
            # The agent runs but no arena is published: an application publishes it after
            # AllocateTensors, which may not have finished. TFLM's own objects say why.
            try:
                loaded = agentless.load(ctx.reader, planner, str(setting("model")).strip())
                ctx.tflm, ctx.plan, ctx.facts = loaded.state, loaded.plan, loaded.facts
            except (TargetError, MemoryReadError) as exc:
                ctx.note = f"no arena published, and TFLM's interpreter could not be read ({exc})"
    except (NotFoundError, DecodeError) as exc:
        if agentless.attached() or agentless.tflm_in_elf():
            if isinstance(exc, DecodeError):  # an agent is there, but its descriptor cannot be trusted
                ctx.descriptor_error = str(exc)
                gdb.write(f"arena: warning: the arenascope descriptor is corrupt ({exc}); showing TFLM's own objects "
                          "instead (agentless mode); `arena check` fails until the descriptor is sound\n")
            # No agent: walk TFLM's own objects (agentless.py, tflm.py).
            try:
                loaded = agentless.load(ctx.reader, _tool_path("planner-path", "planner", "arenascope-plan"),
                                        str(setting("model")).strip())
            except (TargetError, MemoryReadError) as exc2:
                inside = constructor_note()
                if inside and need_descriptor:
                    raise TargetError("TFLM's interpreter is not built yet: the core is inside the "
                                      "tflite::MicroInterpreter constructor; `arena fault` says why") from None
                if inside:
                    exc2 = TargetError(inside)
                if need_descriptor:
                    raise exc2 from None
                loaded = agentless.Loaded(state=tflmstate.State(interpreter=0, condition="unknown",
                                                                evidence=[str(exc2)], objects=[]))
            ctx.desc, ctx.located_by, ctx.minimum_arena = loaded.desc, loaded.how, loaded.minimum
            ctx.tflm, ctx.plan, ctx.facts = loaded.state, loaded.plan, loaded.facts
            for m in loaded.mismatches + ([loaded.plan_note] if loaded.plan_note else []):
                gdb.write(f"arena: warning: {m}\n")
            if ctx.tflm.condition != "allocated" and ctx.tflm.interpreter and _warn_once("tflm-state"):
                gdb.write(f"arena: warning: TFLM is not in a healthy state: {tflmstate.CONDITIONS[ctx.tflm.condition]}"
                          f" (`arena info` shows the evidence, `arena fault` the verdict)\n")
            if ctx.desc is None:
                why = "; ".join(ctx.tflm.evidence) or "its arena's bounds are unknown"
                if need_descriptor:
                    raise TargetError(f"TFLM's arena cannot be shown: {why}; `arena fault` says what can be known")
                ctx.note = f"TFLM's arena cannot be shown ({why})" if ctx.tflm.interpreter else why
            found = stack_symbols()
            if found and ctx.desc is not None:
                ctx.desc.stack = Band(low_addr=found[0], high_addr=found[1], touched_lo=abi.NONE, touched_hi=abi.NONE)
                ctx.stack_source = f"the linker symbols {found[2]}"
        elif need_descriptor:
            raise
        else:
            ctx.note = f"no usable arenascope descriptor ({exc})"
    sp = register("sp")
    bounds = _range_setting("stack-range")
    if ctx.desc is not None:
        desc = ctx.desc
        if verify and not desc.agentless:  # agentless: no bands to scan
            _verify_bands(ctx)
            desc.flags |= abi.FLAG_MEASURED
            desc.measured_by = "host scan of target memory, now"
        elif desc.agent_measured and desc.guard.filled:
            ctx.stale = _verify_bands(ctx, which=("guard",))
            if ctx.stale:  # a fault overtook the agent's measurement: measure everything now
                _verify_bands(ctx)
                verify = True
                desc.measured_by = ("host scan of target memory, now: the agent's last measurement is stale (the "
                                    "guard band changed after it)")
        ctx.figs = {a.index: figures.arena_figures(a, ctx.minimum_arena) for a in desc.arenas}
        scanned = painted = None
        if bounds or verify or not desc.measured:
            lo, hi = bounds or (desc.stack.low_addr, desc.stack.high_addr)
            pattern = _word_setting("stack-paint-pattern", desc.stack_paint_pattern)
            if hi > lo:
                scanned, painted = _scan_stack(ctx.reader, lo, hi, pattern)
        ctx.stack = figures.stack_figures(desc, sp=sp, scanned_hwm=scanned, bounds=bounds, painted=painted)
    else:
        found = bounds or stack_symbols()
        ctx.stack_source = "`set arena stack-range`" if bounds else f"the linker symbols {found[2]}" if found else ""
        if not found:
            raise TargetError("no stack bounds: no arenascope descriptor, no linker symbols (" +
                              ", ".join(f"{a}/{b}" for a, b in STACK_SYMBOLS) +
                              "); set them with `set arena stack-range LOW HIGH`")
        lo, hi = found[0], found[1]
        pattern = _word_setting("stack-paint-pattern", 0xCCCCCCCC)
        hwm, painted = _scan_stack(ctx.reader, lo, hi, pattern)
        ctx.stack = figures.StackFigures(low=lo, high=hi, sp=sp, hwm=hwm, source="scan", painted=painted,
                                          arena_end=None)
    return ctx


def checks_of(ctx):
    out = figures.checks(ctx.desc, ctx.stack, ctx.figs, seq_odd=ctx.seq_odd, ram_ranges=elf_ram_ranges()[0])
    if ctx.tflm is not None and not ctx.tflm.laid_out:
        # Used bytes and headroom of an arena TFLM never finished laying out measure nothing.
        out = [c for c in out if c.rule not in ("used", "headroom")]
    if ctx.tflm is not None and ctx.tflm.condition != "allocated":
        out.insert(0, figures.Check("tflm", figures.FAIL, f"{tflmstate.CONDITIONS[ctx.tflm.condition]}: "
                                     + ("; ".join(ctx.tflm.evidence[:2]) or "no evidence readable")
                                     + " (`arena fault` gives the verdict)"))
    if ctx.descriptor_error:
        out.insert(0, figures.Check("descriptor", figures.FAIL, f"the arenascope descriptor is corrupt "
                                     f"({ctx.descriptor_error}): the figures below are TFLM's own (agentless)"))
    return out


def build_snapshot(ctx):
    progspace = gdb.current_progspace()
    source = {"elf": progspace.filename if progspace else None, "located_by": ctx.located_by}
    snap = snapshot.build(ctx.desc, ctx.figs, ctx.stack, checks_of(ctx), source)
    st = ctx.tflm
    if st is not None and st.interpreter:
        snap["tflm"] = {"interpreter_addr": st.interpreter, "condition": st.condition,
                        "meaning": tflmstate.CONDITIONS[st.condition], "evidence": st.evidence,
                        "arena_symbol": st.arena_symbol, "allocator": st.allocator,
                        "objects": [{"name": o.name, "addr": o.addr, "size_bytes": o.size, "sound": o.sound,
                                     "problems": o.problems} for o in st.objects],
                        "verdicts": []}
    return snap


def attach_verdicts(snap, ctx, f):
    """The post-mortem's verdicts into the snapshot's "tflm" object (docs/snapshot-schema.md)."""
    if "tflm" in snap:
        snap["tflm"]["verdicts"] = [v.json() for v in tflm_verdicts(ctx, f)]


# ----------------------------------------------------------------------------- live view

_LIVE = {"server": None, "hooked": False}


def _push(verify=True):
    """Builds a snapshot and sends it to the connected viewers. Returns (viewers, verdict)."""
    server = _LIVE["server"]
    ctx = gather(verify=verify)
    snap = build_snapshot(ctx)
    f, damaged, _ = find_fault(ctx)
    snap["fault"] = fault_json(f, ctx, damaged) if f is not None else None
    attach_verdicts(snap, ctx, f)
    return server.broadcast(viewerlink.message(snap)), snap["verdict"]


def _on_stop(_event):
    # A snapshot at every stop, watched or not: a viewer that connects later gets this stop's
    # (building it on demand would mean gdb.post_event from the server thread, which GDB runs
    # only when idle and which crashed GDB 13 at exit when still pending).
    if _LIVE["server"] is None:
        return
    try:
        _push()
    except EXPECTED as exc:
        gdb.write(f"arena view: no snapshot at this stop: {exc}\n")
    except Exception as exc:  # pylint: disable=broad-except
        gdb.write(f"arena view: internal error {exc!r} while sending a snapshot\n")


def _on_cont(_event):
    server = _LIVE["server"]
    if server is not None and server.clients:
        server.broadcast(viewerlink.state_message(True), keep=False)


def _on_exit(_event):
    stop_serving()  # stop the accept thread before Python shuts down


def _tool_path(name, folder, executable):
    """The executable named by setting `name`, or 'auto': build/FOLDER/EXECUTABLE beside this
    plugin, then EXECUTABLE on PATH. None when not found."""
    text = str(setting(name)).strip()
    if text not in ("", "auto"):
        text = os.path.expanduser(text)
        return text if os.path.isfile(text) and os.access(text, os.X_OK) else None
    return paths.built_tool(folder, executable)


def _viewer_path():
    return _tool_path("viewer-path", "viewer", "arenascope-viewer")


# ----------------------------------------------------------------------------- commands

class _ArgError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _ArgError(f"{message} (see `help arena {self.prog.split()[-1]}`)")

    def exit(self, status=0, message=None):
        raise _ArgError(message or "")

    def print_help(self, file=None):
        gdb.write(self.format_help())


def _write(lines):
    for line in lines:
        gdb.write(line + "\n")


class ArenaPrefix(gdb.Command):
    """Inspect TensorFlow Lite Micro tensor arenas through the arenascope agent's descriptor, or,
in a firmware without the agent, through TFLM's own objects (agentless mode, needs -g).

Commands (all read-only: they never write target memory or call target functions):
  arena info              bounds, head/temp/tail, used, peak, headroom, canary and stack figures
  arena map [--width N]   the arena as a bar, a legend, then the regions by address
  arena regions [--sort address|size|lifetime]   the region table
  arena plan [--width N]  live bytes per operator, the lower bound (--model FILE: a model's, no target)
  arena stack             stack bounds, paint, high-water mark (works without the agent too)
  arena check             PASS/WARN/FAIL rules; a FAIL makes `gdb -batch` exit non-zero
  arena whereis ADDR      what owns an address
  arena snapshot FILE     everything above as JSON (docs/snapshot-schema.md)
  arena view              open the live arena map window (the viewer), fed at every stop
  arena refresh           send the viewer a fresh snapshot now
  arena live              stream snapshots while the core runs, through OpenOCD's Tcl port
  arena fault             decode the last fault and say whether the stack or the arena did it
  arena attach EXPR       agentless: read this tflite::MicroInterpreter (docs/integrating-tflm.md)
  arena version           arenascope's version and its formats' versions (no target needed)
Settings: `show arena` lists them; `set arena colour off` for plain output.
Docs: docs/gdb-commands.md."""

    def __init__(self):
        super().__init__("arena", gdb.COMMAND_DATA, prefix=True)

    def invoke(self, arg, from_tty):
        if arg.strip():
            raise gdb.GdbError(f"arena: unknown command {arg.split()[0]!r}; `help arena` lists the commands")
        gdb.execute("help arena")


class _Sub(gdb.Command):
    sub = ""
    options = ()

    def __init__(self):
        super().__init__(f"arena {self.sub}", gdb.COMMAND_DATA)
        self.parser = _Parser(prog=f"arena {self.sub}", add_help=True, description=self.__doc__.splitlines()[0])
        self.add_arguments(self.parser)

    def add_arguments(self, parser):
        pass

    def parse(self, arg):
        return self.parser.parse_args(gdb.string_to_argv(arg))

    def complete(self, text, word):
        return [o for o in self.options if o.startswith(word or "")]

    def invoke(self, arg, from_tty):
        colour = setting("colour")
        style.enabled = bool(gdb.parameter("style enabled")) if colour is None else bool(colour)
        try:
            args = self.parse(arg)
        except _ArgError as exc:
            if str(exc).strip():
                raise gdb.GdbError(f"arena {self.sub}: {exc}") from None
            return
        try:
            self.run(args)
        except EXPECTED as exc:
            raise gdb.GdbError(f"arena {self.sub}: {exc}") from None
        except gdb.GdbError:
            raise
        except gdb.error as exc:
            raise gdb.GdbError(f"arena {self.sub}: GDB could not do it: {exc}") from None
        except Exception as exc:  # pylint: disable=broad-except
            if setting("debug"):
                traceback.print_exc()
            raise gdb.GdbError(f"arena {self.sub}: internal error {exc!r}; `set arena debug on` shows the "
                               "traceback: please report it") from None

    def run(self, args):
        raise NotImplementedError


class InfoCommand(_Sub):
    """Print the arena's figures, one per line, units shown.
Size, head, temp, tail, used, peak, canary-intact bytes, headroom, stack bounds, SP,
high-water mark, peak depth and the stack rule.

Usage: arena info
Units are bytes unless shown. Headroom is an upper estimate until the planner tool gives the
model's minimum arena (TFLM needs more than arena_used_bytes() while it allocates)."""
    sub = "info"

    def run(self, args):
        ctx = gather()
        _write([style.paint(f"arenascope {version.VERSION}", "title")])
        _write(tflm_state_lines(ctx))
        lines = render.info_lines(ctx.desc, ctx.figs, ctx.stack, ctx.located_by)
        if ctx.tflm is not None and not ctx.tflm.laid_out:
            # Peak and headroom of an arena TFLM never finished laying out measure nothing.
            lines = [("  headroom:               not measured: AllocateTensors did not finish (`arena fault` gives "
                      "the shortfall)") if line.startswith("  headroom:") else line
                     for line in lines if not line.startswith("  peak:")]
        _write(lines)


class VersionCommand(_Sub):
    """Print arenascope's version and the versions of the formats this plugin reads and writes.
No target needed. The version is the VERSION file beside gdbplugin/ ("unknown" without it), the
same every tool's --version prints.

Usage: arena version"""
    sub = "version"

    def run(self, args):
        _write(version_lines())


def version_lines():
    """`arena version`: the product's version, then each contract's (CHANGELOG.md lists them)."""
    return [f"arenascope {version.VERSION}",
            f"  agent ABI:        {abi.ABI_MAJOR}.x (this plugin knows up to {abi.ABI_MAJOR}.{abi.ABI_MINOR})",
            f"  fault record:     version {faultrecord.RECORD_VERSION}",
            f"  snapshot:         \"{snapshot.SCHEMA}\" version {snapshot.VERSION}",
            f"  planner JSON:     \"{planner.SCHEMA}\"",
            f"  live link:        message version {viewerlink.MESSAGE_VERSION}"]


def tflm_state_lines(ctx):
    """The agentless interpreter's condition and its evidence, object by object (nothing when
    TFLM is healthy)."""
    st = ctx.tflm
    if st is None or st.condition == "allocated":
        return []
    out = [style.paint(f"TFLM state: {st.condition}: {tflmstate.CONDITIONS[st.condition]}", "FAIL")]
    out += [f"  {e}" for e in st.evidence]
    out.append("  objects checked: " + ", ".join(f"{o.name} at {o.addr:#x} ({o.size} B) "
                                                + ("sound" if o.sound else "NOT SOUND (above)") for o in st.objects))
    if ctx.desc is not None and ctx.desc.agentless:
        out.append("  the figures and regions below are rebuilt from the ELF (the arena's bounds), the allocator where "
                   "it is sound and the planner's prediction for the model (regions marked '(predicted)'), not from "
                   "TFLM's pointers")
    return out


def _margin(text):
    """argparse type of --margin: a percentage in 0..100 in ASCII digits, as arenascope-plan takes it."""
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    value = int(text, 10)
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{value}: use 0..100 percent")
    return value


def _width(text):
    """argparse type of --width: a cell count in 16..400."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 16 <= value <= 400:
        raise argparse.ArgumentTypeError(f"{value}: use 16..400 cells")
    return value


class MapCommand(_Sub):
    """Draw the arena as a text bar, with a legend and the regions by address.
The bar shows the head, temp, free band, persistent tail, guard band and canary damage.

Usage: arena map [--width N]    (N cells, default 64)"""
    sub = "map"
    options = ("--width",)

    def add_arguments(self, parser):
        parser.add_argument("--width", type=_width, default=64, help="cells in the bar (16..400)")

    def run(self, args):
        ctx = gather(verify=True)
        _write(render.map_lines(ctx.desc, ctx.figs, args.width))


class RegionsCommand(_Sub):
    """List the regions as a table, sorted by address, size or lifetime.
Columns: index, id, kind, offset, address, size, first/last use, flags, name/shape/type
(when the model gives them).

Usage: arena regions [--sort address|size|lifetime]"""
    sub = "regions"
    options = ("--sort", "address", "size", "lifetime")

    def add_arguments(self, parser):
        parser.add_argument("--sort", choices=sorted(render.SORT_KEYS), default="address")

    def run(self, args):
        ctx = gather()
        _write(render.region_table(ctx.desc, args.sort))


class PlanCommand(_Sub):
    """Chart the memory plan over operator index, with live bytes and the lower bound.
One row per allocation scope: the live bytes, a bar of the live tensors and scratch buffers
over the head, and the lower bound marked.

Usage: arena plan [--width N] [--model FILE.tflite [--target cortex-m|host] [--margin PCT]
                  | --snapshot FILE.json]
Scopes follow TFLM: model inputs live from scope 0, operator i runs in scope i+1.
--model charts a model file's plan instead, with no target: TFLM's greedy plan as the planner
tool arenascope-plan predicts it (`set arena planner-path`; docs/arena-budget.md), with its
arena figures for --target (struct sizes of a Cortex-M, default, or of x86-64) and the
recommendation with --margin percent (default 10).
--snapshot charts the plan saved in a snapshot file (`arena snapshot`, or
`arenascope-plan --snapshot`), no target needed."""
    sub = "plan"
    options = ("--width", "--model", "--snapshot", "--target", "--margin")

    def add_arguments(self, parser):
        parser.add_argument("--width", type=_width, default=64, help="cells in the bar (16..400)")
        parser.add_argument("--model", help="a .tflite file: chart its predicted plan, no target needed")
        parser.add_argument("--target", choices=("cortex-m", "host"), help="with --model: the ABI (default cortex-m)")
        parser.add_argument("--margin", type=_margin, help="with --model: percent added for the recommendation "
                                                            "(0..100, default 10)")
        parser.add_argument("--snapshot", help="a snapshot file: chart the plan it holds, no target needed")

    def run(self, args):
        if args.snapshot is not None and args.model is not None:
            raise TargetError("--model or --snapshot, not both")
        if args.model is None and (args.target is not None or args.margin is not None):
            raise TargetError("--target and --margin go with --model FILE.tflite (a target's own plan has its own ABI "
                              "and arena)")
        if args.snapshot is not None:
            path = os.path.expanduser(args.snapshot)
            try:
                doc = snapshot.load_snapshot_file(path)
                arenas = snapshot.arenas_from_snapshot(doc)
            except snapshot.SnapshotError as e:
                raise TargetError(f"{path}: {e}" if not str(e).startswith(("cannot read", path)) else str(e)) from None
            src = doc["source"]
            what = (f"model {src.get('model')}, predicted by arenascope-plan for {src.get('target')}"
                    if src.get("located_by") == "model" else f"snapshot of {src.get('elf') or 'a target'} at {src.get('time')}")
            _write([f"{path}: {what}"])
            for c in doc.get("checks") if isinstance(doc.get("checks"), list) else []:
                if isinstance(c, dict) and c.get("verdict") in ("WARN", "FAIL"):
                    _write([style.paint(f"{c['verdict']}  {c.get('rule')}: {c.get('reason')}", c["verdict"])])
            if not arenas:
                _write([render.NO_ARENA])
            for a in arenas:
                _write(render.plan_lines(a, figures.plan(a), args.width))
            return
        if args.model is not None:
            if not args.model.strip():
                raise TargetError("--model needs a .tflite file")
            path = os.path.expanduser(args.model)
            if os.path.exists(path) and not os.path.isfile(path):
                raise TargetError(f"{path} is not a regular file: give a .tflite model file")
            try:
                doc, rejected = planner.run_planner(_tool_path("planner-path", "planner", "arenascope-plan"), path,
                                                  args.target or "cortex-m", args.margin)
                a = planner.arena_from_plan(doc)
                budget = planner.arena_lines(doc)
            except planner.PlannerError as e:
                raise TargetError(str(e)) from None
            lines = [f"{path}: predicted by arenascope-plan (no target), TFLM's greedy plan"]
            message = None
            if rejected:
                reason = planner.printable(doc["tflm_rejects"][0]) if doc.get("tflm_rejects") else rejected
                message = f"TFLM would reject this model: {reason}"
                lines.append(style.paint(message + " (its plan is charted all the same)", "FAIL"))
            if doc["approximate"]:
                lines.append(style.paint("APPROXIMATE: the scratch of " +
                                         planner.printable("; ".join(doc["unmodelled_scratch"])) +
                                         " is not modelled; the figures below leave it out", "WARN"))
            # What limits the figures comes first, before the chart: a FLOOR as the others.
            lines += [style.paint(line, "WARN") for line in budget if "FLOOR" in line]
            _write(lines + render.plan_lines(a, figures.plan(a), args.width))
            _write([line for line in budget if "FLOOR" not in line])
            if message and batch_mode():
                raise TargetError(message)  # gdb -batch exits non-zero, as the tool does
            return
        ctx = gather()
        if not ctx.desc.arenas:
            _write([render.NO_ARENA])
        for a in ctx.desc.arenas:
            _write(render.plan_lines(a, figures.plan(a), args.width))


class StackCommand(_Sub):
    """Show the stack: bounds, paint, high-water mark, peak depth and the stack rule.
Scanned from target memory when it runs. Bounds: the descriptor, else the linker symbols
(__StackLimit/__StackTop, _sstack/_estack, ...), else `set arena stack-range LOW HIGH`.

Usage: arena stack"""
    sub = "stack"

    def run(self, args):
        ctx = gather(need_descriptor=False, verify=True)
        if ctx.desc is None:
            gdb.write(f"{ctx.note}: stack bounds from {ctx.stack_source}, high-water mark scanned from memory\n")
        _write(render.stack_lines(ctx.stack, indent=""))
        if ctx.tflm is not None and ctx.tflm.interpreter:
            v = postmortem.stack_into_arena(ctx.reader, ctx.facts, ctx.tflm, ctx.stack, None, ctx.plan)
            if v is not None:
                lines = v.lines()
                _write(lines[:1] + ["  " + line for line in lines[1:]])


class CheckCommand(_Sub):
    """Check the arena's rules and print PASS, WARN or FAIL with a reason for each.
Rules: canary intact (free band and guard band), stack room >= 1.5 x stack peak, arena
16-byte aligned, no two regions with overlapping lifetimes share bytes, headroom in the
10-20 % band, used <= size. Bands, stack and region table are re-read from memory.

Usage: arena check [--strict]
In batch mode (gdb -batch) a FAIL ends the command with an error, so GDB exits non-zero when
the check is its last command (CI can gate on it). --strict does that in any mode; otherwise
an interactive session or a sourced script just prints the verdicts and goes on."""
    sub = "check"
    options = ("--strict",)

    def add_arguments(self, parser):
        parser.add_argument("--strict", action="store_true", help="a FAIL is an error, also outside batch mode")

    def run(self, args):
        ctx = gather(verify=True)
        result = checks_of(ctx)
        if ctx.desc is not None and ctx.desc.agentless:
            _write(["arena check: agentless mode (TFLM's own figures): the canary and guard bands, the invoke counter "
                    "and the fault record need the arenascope agent and are not checked"])
        _write(render.check_lines(result))
        failed = [c.rule for c in result if c.verdict == figures.FAIL]
        if failed and (args.strict or batch_mode()):
            raise gdb.GdbError(f"arena check: failed rules: {', '.join(failed)}")


class WhereisCommand(_Sub):
    """Say which region, tensor or area owns an address.
Or that it is free, in the guard band, on the stack, or outside. Expressions that could
write memory or call a function are refused.

Usage: arena whereis ADDR    (a number, symbol or expression)"""
    sub = "whereis"

    def complete(self, text, word):
        return gdb.COMPLETE_EXPRESSION

    def parse(self, arg):
        if not arg.strip():
            raise _ArgError("give an address: a number, a symbol or an expression (see `help arena whereis`)")
        return argparse.Namespace(address=arg.strip())  # the expression as typed: GDB quoting kept

    def run(self, args):
        addr = parse_address(args.address)
        ctx = gather(verify=True)
        _write(figures.whereis(ctx.desc, addr, ctx.stack))


class SnapshotCommand(_Sub):
    """Write every figure and verdict to FILE as JSON (docs/snapshot-schema.md).

Usage: arena snapshot FILE"""
    sub = "snapshot"

    def complete(self, text, word):
        return gdb.COMPLETE_FILENAME

    def add_arguments(self, parser):
        parser.add_argument("file")

    def run(self, args):
        ctx = gather(verify=True)
        snap = build_snapshot(ctx)
        f, damaged, _ = find_fault(ctx)
        snap["fault"] = fault_json(f, ctx, damaged) if f is not None else None
        attach_verdicts(snap, ctx, f)
        path = os.path.expanduser(args.file)
        if os.path.exists(path) and not os.path.isfile(path):
            raise TargetError(f"{path} is not a regular file: give a file name for the snapshot")
        try:
            snapshot.write_snapshot_file(snap, path)
        except OSError as exc:
            raise TargetError(f"cannot write {path}: {exc.strerror}") from None
        gdb.write(f"arena snapshot: wrote {path} ({len(ctx.desc.arenas)} arena(s), "
                  f"{sum(len(a.regions) for a in ctx.desc.arenas)} regions, verdict {snap['verdict']})\n")


SCB = {"icsr": 0xE000ED04, "shcsr": 0xE000ED24, "cfsr": 0xE000ED28, "hfsr": 0xE000ED2C, "mmfar": 0xE000ED34,
       "bfar": 0xE000ED38}


def _u32(reader, addr):
    return int.from_bytes(reader.read(addr, 4), "little")


def _live_fault(reader):
    """The fault the core is handling now (halted in a fault handler), from its registers, or None.
    EXC_RETURN is in LR only until the handler saves it: after that it is reported unknown."""
    xpsr = register("xpsr")
    if xpsr is None and register("rip") is not None:
        return None  # not a Cortex-M (a host build): no SCB to read
    active = (xpsr & 0x1FF) if xpsr is not None else _u32(reader, SCB["icsr"]) & 0x1FF
    if active not in faultrecord.EXCEPTIONS:
        return None
    regs = {k: _u32(reader, a) for k, a in SCB.items()}
    lr = register("lr")
    pc = register("pc")
    # The stacked frame is at SP only at the handler's first instruction: after that the handler
    # may have pushed onto the same stack (LR can still hold EXC_RETURN). Entry = the vector
    # table's entry for this exception, or the agent's naked entry it branches to.
    vtor = _u32(reader, 0xE000ED08)
    entries = {_u32(reader, vtor + 4 * active) & ~1}
    agent_entry = symbol_address("arenascope_fault_handler")
    if agent_entry is not None:
        entries.add(agent_entry & ~1)
    at_entry = pc is not None and (pc & ~1) in entries
    exc = lr if lr is not None and faultrecord.ExcReturn(lr).valid and at_entry else None
    frame_addr, note = None, ""
    if exc is None:
        frame_addr, note = _saved_fault_sp(reader)
        if frame_addr is None:
            note = ("the frame's address is unknown here: the handler has started (it may have pushed onto the stack, "
                    "and LR may no longer hold EXC_RETURN); " + note + "; or stop at its first instruction (`break "
                    "HardFault_Handler`, `break BusFault_Handler`, ...) and reproduce, or let the agent record it "
                    "(`arena fault` at arenascope_fault_hook)")
    else:
        er = faultrecord.ExcReturn(exc)
        frame_addr = register("psp") if er.psp else register("msp")
        if frame_addr is None and not er.psp:
            frame_addr = register("sp")  # at handler entry SP is MSP and nothing is pushed yet
        if frame_addr is None:
            note = "the frame is on PSP, which this GDB server does not expose (OpenOCD does)"
    frame = None
    if frame_addr is not None and not regs["cfsr"] & (1 << 4 | 1 << 12):
        try:
            frame = list(int.from_bytes(reader.read(frame_addr + 4 * i, 4), "little") for i in range(8))
        except MemoryReadError as exc_:
            note = f"the stacked frame is unreadable ({exc_})"
    return faultrecord.Fault(source="core registers (halted in the handler)", exception=faultrecord.EXCEPTIONS[active],
                       cfsr=regs["cfsr"], hfsr=regs["hfsr"],
                       mmfar=regs["mmfar"] if regs["cfsr"] >> 7 & 1 else None,
                       bfar=regs["bfar"] if regs["cfsr"] >> 15 & 1 else None,
                       exc_return=exc, frame_addr=frame_addr, frame=frame, frame_note=note)


def _saved_fault_sp(reader):
    """(frame address, note) from where a fault handler saved the SP at entry: `set arena
    fault-sp EXPR`, else the first of FAULT_SP_SYMBOLS the ELF has. The address is taken only when
    the frame there looks stacked: xPSR's Thumb bit (bit 24) set (ARMv7-M ARM B1.5.6). (None, why)
    otherwise."""
    text = str(setting("fault-sp")).strip()
    tried = []
    exprs = [text] if text not in ("", "auto") else [n for n in FAULT_SP_SYMBOLS if symbol_address(n) is not None]
    for expr in exprs:
        try:
            value = parse_address(expr)
        except TargetError as e:
            tried.append(str(e))
            continue
        try:
            xpsr = _u32(reader, value + 28)
        except MemoryReadError as e:
            tried.append(f"{expr} = {value:#x} is not readable ({e.why})")
            continue
        if not xpsr >> 24 & 1:
            tried.append(f"{expr} = {value:#x} holds no stacked frame (its xPSR word {xpsr:#x} lacks the Thumb bit)")
            continue
        return value, (f"the frame's address is {expr} ({value:#x}), saved by the handler (EXC_RETURN is gone from "
                       "LR: the frame is taken as a basic 32 B one)")
    if not exprs:
        return None, ("no saved stack pointer to use: `set arena fault-sp EXPR` names where the handler saves it "
                      f"(none of {', '.join(FAULT_SP_SYMBOLS)} is in the ELF)")
    return None, "; ".join(tried)


def lr_lines(reader, f, ctx):
    """What the stacked LR says, without a label: the call site when the instruction before it is
    a call (BL/BLX), else that it is no return address, then the call chain GDB's unwinder (CFI)
    finds instead."""
    lr = f.frame[5]
    if faultrecord.call_before(reader, lr):
        return [where(lr, return_address=True)]
    out = [f"{lr:#010x} is not a return address (the instruction before it is not a call): the function used LR "
           "as a scratch register after saving it, so LR says nothing about the caller"]
    if f.source.startswith("core registers"):
        frames = [fr for fr in halt_of(ctx).frames if fr != "<exception frame>"][1:]
        if frames:
            out.append("call chain (GDB's unwinder, from the stacked frame): " + " <- ".join(frames[:8]))
    return out


def _damaged_regions(reader, desc, rec):
    """Labels of the immutable regions whose bytes no longer match the checksum the agent took
    after allocation (region checksums: target_agent/include/arenascope/faultrecord.h)."""
    if rec is None or not rec.checksums_addr or not desc or not desc.arenas:
        return []
    arena = desc.arenas[0]
    n = min(rec.checksum_count, len(arena.regions))
    try:
        table = reader.read(rec.checksums_addr, 4 * n)
    except MemoryReadError as exc:
        gdb.write(f"arena fault: warning: cannot read the region checksum table at {rec.checksums_addr:#x} "
                  f"({exc.why}): no overwritten regions can be named\n")
        return []
    out = []
    for i in range(n):
        want = int.from_bytes(table[4 * i:4 * i + 4], "little")
        r = arena.regions[i]
        if want and r.size and faultrecord.fnv1a(reader.read(arena.base_addr + r.offset, r.size)) != want:
            out.append(r)
    return out


def halt_state():
    """Where the core is stopped (postmortem.Halt): the PC, GDB's unwound call chain (through
    exception frames), the exception being handled and whether the instruction at the PC
    branches to itself (`b .`: Thumb T2 0xE7FE, or B.W . 0xF7FF 0xBFFE; ARMv7-M ARM A7.7.12)."""
    halt = postmortem.Halt(pc=register("pc"))
    try:
        frame = gdb.newest_frame()
        while frame is not None and len(halt.frames) < 32:
            halt.frames.append("<exception frame>" if frame.type() == gdb.SIGTRAMP_FRAME else
                               frame.name() or f"{frame.pc():#x}")
            frame = frame.older()
    except gdb.error:
        pass
    halt.function = halt.frames[0] if halt.frames else ""
    xpsr = register("xpsr")
    if xpsr is not None:
        halt.in_handler = faultrecord.EXCEPTIONS.get(xpsr & 0x1FF)
        try:
            code = GdbReader().read(halt.pc & ~1, 4)
            halt.spinning = code[:2] == b"\xfe\xe7" or code == b"\xff\xf7\xfe\xbf"
        except MemoryReadError:
            pass
    return halt


def constructor_note():
    """What to say when the core is inside TFLM's MicroInterpreter constructor (the interpreter
    is not built, so no scan finds it), with the arena size the constructor was given (its
    tensor_arena_size argument, when GDB can read it), or None."""
    halt = halt_state()
    if not any("MicroInterpreter::MicroInterpreter" in f for f in halt.frames):
        return None
    size = model_addr = None
    try:
        frame = gdb.newest_frame()
        while frame is not None:
            if "MicroInterpreter::MicroInterpreter" in (frame.name() or ""):
                size = int(frame.read_var("tensor_arena_size"))
                model_addr = int(frame.read_var("model"))
                break
            frame = frame.older()
    except (gdb.error, ValueError, RuntimeError):
        pass
    stuck = postmortem.stuck_line(halt)
    if not stuck:
        return "the core is inside the tflite::MicroInterpreter constructor, so there is no interpreter to read yet"
    text = ""
    if size is not None and model_addr:
        try:  # the model the constructor was given, planned at the size it was given
            doc = agentless.plan_for(GdbReader(), agentless.layout(), model_addr,
                                     _tool_path("planner-path", "planner", "arenascope-plan"), "", arena_size=size)
            text = " " + postmortem.replay_lines(doc, size)[0] + "."
        except (TargetError, MemoryReadError):
            pass
    return (f"VERDICT: the arena is too small for TFLM's own allocator objects: the core is stuck inside the "
            f"tflite::MicroInterpreter constructor (MicroAllocator::Create), which was given {size} B."
            + (text or " `arena plan --model FILE.tflite` gives the arena this model needs.")
            + f" {stuck[0].upper()}{stuck[1:]}")


def halt_of(ctx):
    """halt_state(), unwound once a command (the report, the verdicts and the snapshot share it)."""
    if ctx.halt is None:
        ctx.halt = halt_state()
    return ctx.halt


def tflm_verdicts(ctx, f):
    """The post-mortem's Verdicts for an agentless TFLM firmware (postmortem.py), computed once
    for a command's fault (its text and its snapshot both use them)."""
    if ctx.tflm is None or not ctx.tflm.interpreter:
        return []
    if ctx.verdicts is not None and ctx.verdicts[0] is f:
        return ctx.verdicts[1]
    found = [postmortem.stack_into_arena(ctx.reader, ctx.facts, ctx.tflm, ctx.stack, f, ctx.plan),
             postmortem.allocation(ctx.tflm, f, halt_of(ctx), ctx.plan, ctx.reader)]
    found = [v for v in found if v is not None]
    found += [v for v in (postmortem.damaged(ctx.tflm, ctx.stack, found),) if v is not None]
    ctx.verdicts = (f, found)
    return found


def arena_verdict(ctx, f, damaged):
    """The verdict in plain words, from the arena's point of view."""
    out = []
    desc, s = ctx.desc, ctx.stack
    sp = f.pre_fault_sp if f else None
    if s is not None and sp is not None and s.low <= sp <= s.high:
        out.append(f"SP at the fault {sp:#x} was inside the stack ({s.high - sp} B in use)")
    elif s is not None and sp is not None:
        out.append("SP at the fault: " + "; ".join(figures.whereis(desc, sp, s)) if desc else
                   f"SP at the fault {sp:#x} is outside the stack {s.low:#x}-{s.high:#x}")
    if ctx.tflm is not None and ctx.tflm.interpreter:
        verdicts = tflm_verdicts(ctx, f)
        for v in verdicts:
            out += v.lines()
        if verdicts:
            addr = f.bfar if f and f.bfar is not None else f.mmfar if f and f.mmfar is not None else None
            tied = any(line.startswith("the faulting address") for line in out)
            if addr is not None and desc and not tied:
                out.append("the faulting address: " + "; ".join(figures.whereis(desc, addr, s)))
            return out
        stuck = postmortem.stuck_line(halt_of(ctx))
        if stuck:
            out.append(stuck)
    stack_in_arena = s is not None and s.peak_is_lower_bound
    if stack_in_arena or damaged:
        names = ", ".join(f"{figures.region_label(r)} (+{r.offset}..+{r.end})" for r in damaged)
        out.append("VERDICT: the stack ran into the arena. " +
                   (f"Its paint is gone to the limit {s.low:#x} and the guard band below it is overwritten. " if
                    stack_in_arena else "") +
                   (f"Persistent tail regions overwritten since allocation: {names}. " if damaged else "") +
                   "A stack grown down into the arena overwrites the persistent tail first (TFLM's eval tensors, "
                   "node array, op data): the fault comes later, when that data is used. Give the stack at least "
                   "1.5 x its peak before the arena's end, or move the arena away from the stack.")
    free_damage = [c for c in figures.checks(desc, s, ctx.figs) if c.rule == "canary" and c.verdict == "FAIL"] \
        if desc else []
    for c in free_damage:
        out.append("VERDICT: something wrote past its buffer in the arena: " +
                   c.reason.removesuffix(": something wrote past its buffer"))
    addr = f.bfar if f and f.bfar is not None else f.mmfar if f and f.mmfar is not None else None
    if addr is not None and desc:
        out.append("the faulting address: " + "; ".join(figures.whereis(desc, addr, s)))
    if not stack_in_arena and not damaged and not free_damage and f is not None:
        where_ = ("the code that called through the pointer: see LR" if f.pc == 0 else
                  "the code at the stacked PC" if f.frame else
                  "the code that faulted (no stacked frame here to say where)")
        if desc is not None and desc.agentless and ctx.tflm is not None and ctx.tflm.condition == "allocated" and \
                s is not None and s.painted and not s.overflowed:
            out.append("VERDICT: none of these: the stack stayed above its limit, TFLM's allocator objects hold TFLM's "
                       "values and AllocateTensors finished (no agent: no canary bands to check for overruns "
                       f"inside the arena); look at {where_}")
        elif desc is not None and desc.agentless:
            out.append("VERDICT: unknown whether the arena or the stack did it: with no arenascope agent there are no "
                       "canary or guard bands and no region checksums to tell"
                       + ("" if s is not None and s.high > s.low and s.painted else ", and the stack's bounds or paint "
                          "are unknown") + f"; look at {where_}")
        else:
            out.append("VERDICT: not the arena and not the stack: the arena's bands and checksums are intact and the "
                       f"stack stayed inside its bounds; the cause is {where_}")
    return out


def find_fault(ctx):
    """(Fault or None, damaged immutable regions, why there is no fault): from the agent's record
    when it holds a fault of this boot (or of an earlier one when the core is not in a handler),
    else from the core's registers when it is halted in a fault handler."""
    reader = GdbReader()
    rec, rec_note = None, ""
    rec_addr = symbol_address("arenascope_fault_record")
    if rec_addr is None and ctx.desc is not None and ctx.desc.fault_record_addr:
        rec_addr = ctx.desc.fault_record_addr
    if rec_addr is not None:
        try:
            rec = faultrecord.decode_record(reader.read(rec_addr, 100), rec_addr)
        except (faultrecord.RecordError, MemoryReadError) as exc:
            rec_note = str(exc)
    damaged = _damaged_regions(reader, ctx.desc, rec) if ctx.desc is not None else []
    live_f = _live_fault(reader)
    f = None
    if rec is not None and rec.fault_count and (live_f is None or rec.fault_boot == rec.boot_count):
        f = faultrecord.from_record(rec)
        this_boot = rec.fault_boot == rec.boot_count
        if this_boot and live_f is None and not (_u32(reader, SCB["cfsr"]) or _u32(reader, SCB["hfsr"])):
            # The fault status registers are clear: the core has reset since, and the agent has not
            # counted the new boot yet (halted before arenascope_fault_boot).
            f.source = (f"the agent's fault record at {rec_addr:#x}, from before a reset (the fault status "
                        "registers are clear now: the target has reset since; the agent has not counted this "
                        "boot yet)")
        else:
            f.source = (f"the agent's fault record at {rec_addr:#x} (this boot, fault {rec.fault_count})" if this_boot
                        else f"the agent's fault record at {rec_addr:#x}, from boot {rec.fault_boot} "
                             f"(this is boot {rec.boot_count}: the target has reset since)")
    elif live_f is not None:
        f = live_f
        if rec is not None and rec.fault_count and rec.fault_boot != rec.boot_count:
            f.source += f"; the agent's record holds an older fault from boot {rec.fault_boot}"
        if rec_note:
            f.source += f"; the agent's record was not used: {rec_note}"
    note = rec_note or ("the agent's record has no fault this boot" if rec else
                        "there is no agent fault record (arenascope_fault_record)")
    return f, damaged, note


def fault_json(f, ctx, damaged):
    """The fault as the snapshot carries it (docs/snapshot-schema.md, "fault")."""
    stale = "the target has reset since" in f.source
    verdict = [] if stale or (ctx.desc is None and ctx.tflm is None) else arena_verdict(ctx, f, damaged)
    return {"exception": f.exception, "source": f.source, "cfsr": f.cfsr, "hfsr": f.hfsr,
            "bits": faultrecord.cfsr_lines(f.cfsr) + faultrecord.hfsr_lines(f.hfsr), "mmfar": f.mmfar, "bfar": f.bfar,
            "exc_return": f.exc_return,
            "exc_return_text": faultrecord.ExcReturn(f.exc_return).describe() if f.exc_return is not None else None,
            "frame_addr": f.frame_addr,
            "frame": dict(zip(faultrecord.FRAME_NAMES, f.frame)) if f.frame else None,
            "pc_where": where(f.pc) if f.frame else None,
            "lr_where": " ".join(lr_lines(GdbReader(), f, ctx)) if f.frame else None,
            "causes": faultrecord.cause_lines(f),
            "verdict": verdict,
            "damaged_regions": [r.index for r in damaged]}


class FaultCommand(_Sub):
    """Decode the last fault and say whether the stack or the arena did it.
Works halted in a fault handler (with or without the agent: registers from the core) and after
a reset (from the agent's fault record, which survives warm resets). Prints every set bit of
CFSR and HFSR with its meaning, MMFAR/BFAR when valid, the stacked frame chosen by EXC_RETURN,
the faulting PC and LR as function and file:line, then the verdict from the arena's point of
view: the stack against the guard band and the arena, the persistent regions overwritten since
allocation (the agent's checksums), canary damage, where the faulting address is.

Usage: arena fault"""
    sub = "fault"

    def run(self, args):
        check_readable()
        try:
            ctx = gather(need_descriptor=False, verify=True)
        except EXPECTED as exc:
            ctx = Context()
            ctx.note = str(exc)
        f, damaged, note = find_fault(ctx)
        if f is None:
            lines = ["arena fault: no fault: the core is not in a fault handler, and " + note]
            if ctx.tflm is not None and ctx.tflm.interpreter:
                lines[0] += "; what TFLM's objects say:"
            if ctx.desc is not None or ctx.tflm is not None:
                verdict = arena_verdict(ctx, None, damaged)
                heads = [l for l in verdict if l.startswith("VERDICT")]
                if ctx.tflm is not None and not ctx.tflm.interpreter:
                    heads += ctx.tflm.evidence  # no interpreter to read: why (e.g. stuck in its constructor)
                lines += heads + (["  " + l for l in verdict if not l.startswith("VERDICT")] if ctx.tflm else [])
            _write(lines)
            return
        _write(self.report(f, ctx, damaged))

    @staticmethod
    def report(f, ctx, damaged):
        stale = "the target has reset since" in f.source
        verdict = [] if (ctx.desc is None and ctx.tflm is None) or stale else arena_verdict(ctx, f, damaged)
        out = [style.paint(f"{f.exception or 'fault (exception unknown)'}: from {f.source}", "title")]
        # The answer first: the verdicts, then the evidence.
        for i, v in enumerate(v for v in verdict if v.startswith("VERDICT")):
            out.append("  " + (v if i == 0 else "VERDICT (also): " + v[len("VERDICT: "):]))
        bits = faultrecord.cfsr_lines(f.cfsr) + faultrecord.hfsr_lines(f.hfsr)
        out += ["  " + b for b in bits] or ["  no fault status bits set"]
        out.append(f"  CFSR {f.cfsr:#010x}  HFSR {f.hfsr:#010x}")
        if f.mmfar is not None:
            out.append(f"  MMFAR {f.mmfar:#010x} (valid)")
        if f.bfar is not None:
            out.append(f"  BFAR  {f.bfar:#010x} (valid)")
        elif f.cfsr >> 10 & 1:
            out.append("  BFAR not valid: imprecise bus error")
        if f.exc_return is not None:
            out.append("  EXC_RETURN " + faultrecord.ExcReturn(f.exc_return).describe())
        else:
            out.append("  EXC_RETURN unknown")
        if f.frame:
            regs = "  ".join(f"{n} {v:#010x}" for n, v in zip(faultrecord.FRAME_NAMES, f.frame))
            out.append(f"  stacked frame at {f.frame_addr:#x}: {regs}")
            if f.frame[7] >> 9 & 1:
                out.append("  xPSR bit 9: the core added 4 bytes to align the frame to 8 bytes")
            out.append(f"  faulting PC: {where(f.pc)}")
            lr = lr_lines(GdbReader(), f, ctx)
            out += [f"  LR:          {lr[0]}"] + ["  " + line for line in lr[1:]]
            for name, value in zip(faultrecord.FRAME_NAMES[:5], f.frame[:5]):
                for r in damaged:
                    arena = ctx.desc.arenas[0]
                    if arena.base_addr + r.offset <= value < arena.base_addr + r.end:
                        out.append(f"  {name} {value:#x} points into {figures.region_label(r)} "
                                   f"(+{r.offset}..+{r.end}), overwritten since allocation: the faulting code was "
                                   "using damaged data")
        if f.frame_note:
            out.append("  " + f.frame_note)
        out += ["  " + (c if c.startswith("note:") else "cause: " + c) for c in faultrecord.cause_lines(f)]
        if f.source.startswith("core registers"):
            halt = halt_of(ctx)
            if halt.spinning and halt.in_handler:  # e.g. CubeMX's `while (1) {}`: `continue` never returns
                out.append(f"  the core is stuck in {halt.function or 'the handler'}'s endless loop at {halt.pc:#x}: "
                           "continuing will not get past it; read the fault now, then reset")
        if stale and ctx.desc is not None:
            out.append("  the arena and the stack in memory are this boot's (re-filled and re-painted at reset): "
                       "only the registers and the frame above are the fault's")
            out += ["  " + v for v in arena_verdict(ctx, f, damaged) if v.startswith("the faulting address")]
        elif ctx.desc is not None or ctx.tflm is not None:
            out += ["  " + v for v in verdict if not v.startswith("VERDICT")]
        else:
            out.append(f"  no arena verdict: {ctx.note}")
        return out


def stop_serving():
    """Stops serving snapshots (the viewer keeps its last one). Returns whether it was serving."""
    server = _LIVE["server"]
    if server is not None:
        server.close()
        _LIVE["server"] = None
    return server is not None


def serve(port=None, no_launch=False, wait=0.0, who="arena view"):
    """The snapshot server on 127.0.0.1:port (default: the view-port setting), started once, with
    the stop hooks; starts the viewer unless no_launch or one is connected. Returns the server."""
    port = port if port is not None else int(setting("view-port"))
    if _LIVE["server"] and _LIVE["server"].port != port:
        stop_serving()
    server = _LIVE["server"]
    if server is None:
        server = _LIVE["server"] = viewerlink.SnapshotServer(port)
    if not _LIVE["hooked"]:
        gdb.events.stop.connect(_on_stop)
        gdb.events.cont.connect(_on_cont)
        if hasattr(gdb.events, "gdb_exiting"):
            gdb.events.gdb_exiting.connect(_on_exit)
        _LIVE["hooked"] = True
    where = f"127.0.0.1:{server.port}"
    gdb.write(f"{who}: serving snapshots on {where} (every stop, and `arena refresh`)\n")
    if not no_launch and server.clients == 0:
        server.connected.wait(1.5)  # a viewer from an earlier session reconnects within a second
        if server.clients:
            gdb.write(f"{who}: a viewer reconnected\n")
        elif not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            gdb.write(f"{who}: no display (DISPLAY is not set): not starting the viewer. Write a picture "
                      "instead: `arena snapshot s.json`, then `xvfb-run arenascope-viewer s.json --screenshot "
                      "s.png`\n")
        else:
            path = _viewer_path()
            if path is None:
                raise TargetError("cannot find the viewer: build it (bash tools/build.sh) or `set arena "
                                  "viewer-path /path/to/arenascope-viewer`")
            subprocess.Popen([path, "--connect", where], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
            gdb.write(f"{who}: started {path}\n")
    if wait > 0 and server.clients == 0:
        deadline = time.time() + wait
        while server.clients == 0 and time.time() < deadline:
            server.connected.wait(0.1)
        if server.clients == 0:
            gdb.write(f"{who}: no viewer connected within {wait:.0f} s\n")
    return server


class ViewCommand(_Sub):
    """Open the live arena map window, fed a snapshot at every stop.
Serves snapshots on a loopback port and starts the viewer.
The viewer gets a snapshot now, on every stop and on `arena refresh`; it keeps the last one
when the link drops and reconnects when GDB serves again on the same port.

Usage: arena view [--port N] [--no-launch] [--wait SECONDS] [--stop]
  --port N       port on 127.0.0.1 (default: `show arena view-port`, 47800)
  --no-launch    serve only; start the viewer yourself: arenascope-viewer --connect 127.0.0.1:PORT
  --wait S       wait up to S seconds for a viewer to connect before going on
  --stop         stop serving (the viewer keeps its last snapshot)"""
    sub = "view"
    options = ("--port", "--no-launch", "--wait", "--stop")

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=None)
        parser.add_argument("--no-launch", action="store_true")
        parser.add_argument("--wait", type=float, default=0.0)
        parser.add_argument("--stop", action="store_true")

    def run(self, args):
        if args.stop:
            stop_serving()
            gdb.write("arena view: stopped serving snapshots\n")
            return
        serve(args.port, args.no_launch, args.wait)
        try:
            sent, verdict = _push()
            gdb.write(f"arena view: snapshot sent to {sent} viewer(s), verdict {verdict}\n")
        except (TargetError, NotFoundError, DecodeError) as exc:
            gdb.write(f"arena view: nothing to send yet ({exc}); snapshots follow at the next stop\n")


class RefreshCommand(_Sub):
    """Send a fresh snapshot to the live viewer now.
`arena view` sends one at every stop too.

Usage: arena refresh"""
    sub = "refresh"

    def run(self, args):
        if _LIVE["server"] is None:
            raise TargetError("no live view: start it with `arena view`")
        sent, verdict = _push()
        gdb.write(f"arena refresh: snapshot sent to {sent} viewer(s), verdict {verdict}\n")


class AttachCommand(_Sub):
    """Read an unmodified TFLM firmware with no agent: name its MicroInterpreter.
Agentless mode walks TFLM's own objects (the arena allocator's head/temp/tail, the tensors'
data pointers, the scratch buffer handles) from the firmware's DWARF, with lifetimes from the
model (read from the ELF, planned by arenascope-plan). Without `arena attach` the plugin finds
an interpreter by scanning RAM for its MicroInterpreterGraph vtable pointer.

Usage: arena attach EXPR      a tflite::MicroInterpreter, or a pointer to one
       arena attach --clear   forget it (find the descriptor, or scan, again)"""
    sub = "attach"

    def add_arguments(self, parser):
        parser.add_argument("expr", nargs="*", help="a tflite::MicroInterpreter or a pointer to one")
        parser.add_argument("--clear", action="store_true", help="forget the attached interpreter")

    def run(self, args):
        if args.clear:
            agentless.detach()
            _write(["arena attach: forgotten; commands look for the agent's descriptor again"])
            return
        if not args.expr:
            raise TargetError("arena attach needs an expression: a tflite::MicroInterpreter or a pointer to one")
        address = agentless.attach(" ".join(args.expr))
        _write([f"arena attach: the MicroInterpreter at {address:#x}; arena commands read TFLM's own objects "
                "(agentless mode) until `arena attach --clear`"])


def register_all():
    _register_settings()
    ArenaPrefix()
    for cls in (InfoCommand, MapCommand, RegionsCommand, PlanCommand, StackCommand, CheckCommand, WhereisCommand,
                SnapshotCommand, ViewCommand, RefreshCommand, FaultCommand, AttachCommand, VersionCommand):
        cls()
    from arenascope_plugin.gdb import cmd_live  # pylint: disable=import-outside-toplevel  (it imports this module)
    cmd_live.register()
    gdb.events.new_objfile.connect(_forget)
    gdb.events.exited.connect(_forget)
    gdb.events.stop.connect(lambda _event: _WARNED.clear())
