"""The GDB side: the only module that touches gdb for memory, symbols and target state.
Read-only: nothing here writes target memory or calls a function on the target."""
from typing import Any

import gdb  # pylint: disable=import-error

from arenascope_plugin import ports
from arenascope_plugin.acquire import elfinfo, targetmemory
from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.acquire.symbols import Core, Symbols
from arenascope_plugin.errors import TargetError
from arenascope_plugin.settings_table import SIDE_EFFECT

# What GDB says when the remote link is gone (remote.c), as opposed to an address it cannot read.
# What GDB said when the link to the target was last lost (None: not since the last readable target).
LOST: dict[str, str | None] = {"why": None}
LINK_LOST = ("Remote connection closed", "Remote communication error", "Connection timed out",
             "The program has no registers now", "Remote target disconnected", "not being run",
             "Broken pipe")


class GdbReader(MemoryReader):
    """Reads the selected inferior's memory through GDB (any GDB server). Counts what it reads
    in the class attributes `calls` and `bytes` (tools/bench_plugin.py reports them)."""
    name = "target"
    calls = 0
    bytes = 0
    # a present.progress.Progress while a command runs (gdb/framework.py); Any: acquire/ is below present/
    progress: Any = None

    def read(self, addr, length):
        GdbReader.calls += 1
        GdbReader.bytes += length
        if addr < 0 or length < 0 or addr + length - 1 > address_mask():
            raise MemoryReadError(addr, length, "not an address of this target (beyond its address width): a corrupt "
                                                "pointer")
        try:
            data = gdb.selected_inferior().read_memory(addr, length).tobytes()
            if GdbReader.progress is not None:
                GdbReader.progress.add(length)
            return data
        except (gdb.MemoryError, gdb.error) as exc:
            if any(m in str(exc) for m in LINK_LOST):
                LOST["why"] = str(exc)
                raise TargetError(f"the link to the target was lost while reading {length} B at {addr:#x} (GDB: "
                                  f"{exc}): nothing read after it is used; reconnect (`target remote HOST:PORT`, or "
                                  "restart the GDB server) and ask again") from None
            raise MemoryReadError(addr, length, str(exc)) from None


def check_readable(in_condition=False):
    """Raises TargetError unless GDB can read the target's memory now. in_condition: for the
    $arena_*() functions, which a breakpoint condition calls while GDB counts the thread as
    running though its memory and registers can be read: only the running check is skipped."""
    inferior = gdb.selected_inferior()
    if not gdb.objfiles() and inferior.pid == 0:
        raise TargetError("no program loaded and no target connected: load the firmware's ELF (`file fw.elf`) "
                          "and connect (`target remote HOST:PORT`, or `target extended-remote` to OpenOCD)")
    running = TargetError("the target is running and GDB cannot read its memory in all-stop mode: halt it "
                          "(Ctrl-C or `interrupt`) and retry")
    try:
        threads = inferior.threads() if inferior.pid else ()
        thread = gdb.selected_thread()
    except gdb.error as exc:
        if "running" in str(exc):
            raise running from None
        if any(m in str(exc) for m in LINK_LOST):
            LOST["why"] = str(exc)
            raise TargetError(f"the link to the target was lost (GDB: {exc}): reconnect (`target remote HOST:PORT`, "
                              "or restart the GDB server) and ask again") from None
        raise TargetError(f"GDB cannot query the target: {exc}") from None
    if (inferior.pid == 0 or not threads) and LOST["why"] and gdb.objfiles():
        # GDB dropped the target when its link went: "not running" would send a user to `run`
        raise TargetError(f"no target since the link to it was lost (GDB: {LOST['why']}): reconnect (`target remote "
                          "HOST:PORT`, or restart the GDB server and the board's link) and ask again")
    if inferior.pid == 0 or not threads:
        raise TargetError("the target is not running: connect to it (`target remote HOST:PORT`) or start it "
                          "(`run`, `starti`); a loaded ELF alone has no RAM to read (a RAM dump does: `arena dump "
                          "load FILE@ADDR`)")
    LOST["why"] = None  # a target again
    if thread is not None and thread.is_running() and not gdb.parameter("non-stop") and not in_condition:
        raise running
    # In non-stop mode memory reads work while threads run; the seqlock keeps them consistent.


def batch_mode():
    """True when this GDB was started with -batch (read from /proc/self/cmdline; GDB's Python
    has no API for it). False where /proc is missing."""
    try:
        with open("/proc/self/cmdline", "rb") as f:
            args = f.read().split(b"\0")
    except OSError:
        return False
    return any(a in (b"-batch", b"--batch", b"-batch-silent", b"--batch-silent") for a in args)


def symbol_address(name):
    """Address of a global symbol (with or without debug info), or None."""
    try:
        value = gdb.parse_and_eval(f"&{name}")
        return int(value.cast(gdb.lookup_type("unsigned long long")))
    except gdb.error:
        return None


def register(name):
    try:
        return int(gdb.parse_and_eval(f"${name}")) & address_mask()
    except gdb.error:
        return None


def address_mask():
    """All-ones of the target's pointer width (GDB's current architecture)."""
    try:
        return (1 << (8 * gdb.lookup_type("void").pointer().sizeof)) - 1
    except gdb.error:
        return 0xFFFFFFFFFFFFFFFF


def eval_read_only(text):
    """gdb.parse_and_eval(text) with GDB refusing target function calls meanwhile (`set
    may-call-functions off`, GDB manual "Calling Program Functions"), so no spelling of a call
    (`(f)(1)`, `(*fp)(1)`) gets through; assignments are refused by SIDE_EFFECT before (GDB's
    may-write-memory cannot be changed while a process runs). TargetError when GDB refused."""
    was = gdb.parameter("may-call-functions")
    gdb.execute("set may-call-functions off", to_string=True)
    try:
        value = gdb.parse_and_eval(text)
        value.fetch_lazy()
        return value
    except gdb.error as exc:
        if "may-call-functions" in str(exc):
            raise TargetError(f"refusing {text!r}: it would call a target function, and arenascope only reads; "
                              "give a number, a symbol, &var or arithmetic on them") from None
        raise
    finally:
        gdb.execute(f"set may-call-functions {'on' if was else 'off'}", to_string=True)


def parse_address(text):
    """An address expression (number, symbol, expression) evaluated by GDB, masked to the
    target's address width. Refuses expressions that could write memory or call a function:
    arenascope never changes the target."""
    if SIDE_EFFECT.search(text):
        raise TargetError(f"refusing {text!r}: it could write target memory or call a target function, and "
                          "arenascope only reads; give a number, a symbol, &var or arithmetic on them")
    try:
        v = eval_read_only(text)
        t = v.type.strip_typedefs()
        if t.code in (gdb.TYPE_CODE_REF, gdb.TYPE_CODE_RVALUE_REF):
            v = v.referenced_value()
            t = v.type.strip_typedefs()
        if t.code in (gdb.TYPE_CODE_ARRAY, gdb.TYPE_CODE_FUNC, gdb.TYPE_CODE_STRUCT, gdb.TYPE_CODE_UNION) and \
                v.address is not None:
            v = v.address  # an array, a function or an object names where it is
        elif t.code in (gdb.TYPE_CODE_STRUCT, gdb.TYPE_CODE_UNION, gdb.TYPE_CODE_FLT):
            raise TargetError(f"{text!r} is a {t} value, not an address: give a pointer, a number or &object")
        elif t.code in (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_CHAR, gdb.TYPE_CODE_BOOL) and v.address is not None and \
                t.sizeof < gdb.lookup_type("void").pointer().sizeof:
            raise TargetError(f"{text!r} is a {t.sizeof}-byte {t} variable (its value is {int(v):#x}), too narrow to "
                              f"be an address: for where it is stored, give &{text}" if text.isidentifier() else
                              f"{text!r} is a {t.sizeof}-byte {t} value held in memory ({int(v):#x}), too narrow to "
                              f"be an address: for where it is stored, give &({text})")
        value = int(v.cast(gdb.lookup_type("unsigned long long")))
    except gdb.error as exc:
        raise TargetError(f"cannot evaluate {text!r} as an address: {exc}") from None
    masked = value & address_mask()
    if masked != value and value >> 63 == 0:
        raise TargetError(f"{text!r} is {value:#x}, wider than the target's addresses")
    return masked


def elf_ram_ranges():
    """([(lo, hi, section name)], why-empty) for the loaded ELF's RAM sections (elfinfo.ram_ranges)."""
    progspace = gdb.current_progspace()
    path = progspace.filename if progspace else None
    if not path:
        return [], "no ELF loaded"
    return elfinfo.ram_ranges(path)


# ----------------------------------------------------------------------------- Symbols and Core

def _member_offsets(t, wanted, prefix=0, out=None, sizes=None):
    """Offsets of the wanted members, looking into base classes too (bitpos / 8); their sizes
    into `sizes` when given."""
    out = {} if out is None else out
    for f in t.fields():
        if f.is_base_class:
            _member_offsets(f.type.strip_typedefs(), wanted, prefix + f.bitpos // 8, out, sizes)
        elif f.name in wanted and f.name not in out:
            out[f.name] = prefix + f.bitpos // 8
            if sizes is not None:
                sizes[f.name] = f.type.strip_typedefs().sizeof
    return out


class GdbSymbols(Symbols):
    """Symbols through GDB: the loaded ELF, at the addresses the process has them."""

    def __init__(self):
        progspace = gdb.current_progspace()
        self.elf_path = progspace.filename if progspace else None
        self.file_addresses = bool(elf_ram_ranges()[0])

    def address(self, name):
        return symbol_address(name if name.replace("_", "a").isalnum() else f"'{name}'")

    def name_at(self, addr):
        try:
            text = (gdb.execute(f"info symbol {addr:#x}", to_string=True) or "").strip()  # to_string: a str
        except gdb.error:
            return None
        if not text or text.startswith("No symbol"):
            return None
        text = text.split(" in section")[0].strip()
        name, plus, off = text.rpartition(" + ")
        if plus and off.isdigit():
            return name, int(off)
        return text, 0

    def line_at(self, addr):
        line = gdb.find_pc_line(addr)
        if line.symtab is None or not line.line:
            return None
        return line.symtab.filename, line.line

    def members(self, type_name, wanted):
        try:
            t = gdb.lookup_type(type_name).strip_typedefs()
        except gdb.error:
            return None
        widths: dict[str, int] = {}
        found = _member_offsets(t, set(wanted), sizes=widths)
        return {m: (found[m], widths.get(m)) for m in found}

    def base_offset(self, type_name, base_name):
        try:
            t = gdb.lookup_type(type_name).strip_typedefs()
        except gdb.error:
            return None
        return next((f.bitpos // 8 for f in t.fields()
                     if f.is_base_class and f.type.strip_typedefs().name == base_name), None)

    def pointer_size(self):
        return gdb.lookup_type("void").pointer().sizeof

    def type_size(self, name):
        try:
            return gdb.lookup_type(name).strip_typedefs().sizeof
        except gdb.error:
            return None

    def object_size(self, name):
        try:
            return int(gdb.parse_and_eval(f"sizeof({name})"))
        except gdb.error:
            return None

    def ram_ranges(self):
        return elf_ram_ranges()

    def target_memory(self):
        """What the user named (`set arena memory`, read here) and GDB's memory map (`info mem`:
        the server's regions, or the user's own `mem` regions): targetmemory."""
        if "target-memory" not in self.memo:
            try:
                self.declared_memory = tuple(targetmemory.parse(str(gdb.parameter("arena memory") or "")))
            except (RuntimeError, ValueError, gdb.error):  # not registered (a bare import), or refused when set
                self.declared_memory = ()
            try:
                mapped = targetmemory.from_info_mem(gdb.execute("info mem", to_string=True) or "")
            except gdb.error:
                mapped = []
            self.memo["target-memory"] = mapped
        return super().target_memory() + list(self.memo["target-memory"])

    def scan_ranges(self):
        ranges = list(elf_ram_ranges()[0])
        if not ranges:  # a position-independent executable: its sections where the process has them
            for line in (gdb.execute("info files", to_string=True) or "").splitlines():
                parts = line.split()
                if len(parts) == 5 and parts[1] == "-" and parts[3] == "is" and parts[4] in (".data", ".bss"):
                    entry = (int(parts[0], 16), int(parts[2], 16), parts[4])
                    if entry not in ranges:  # a remote target lists them twice
                        ranges.append(entry)
        return ranges


class GdbCore(Core):
    """The selected thread's registers and GDB's unwound call chain."""

    # GDB names registers as the server's target description does (QEMU's gdbstub and OpenOCD
    # spell some differently): every port's aliases.
    ALIASES = {k: v for p in ports.all_ports() for k, v in p.register_aliases.items()}

    def register(self, name):
        for alias in self.ALIASES.get(name, (name,)):
            value = register(alias)
            if value is not None:
                return value
        return None

    def frames(self):
        out: list[str] = []
        try:
            frame: gdb.Frame | None = gdb.newest_frame()
            while frame is not None and len(out) < 32:
                out.append("<exception frame>" if frame.type() == gdb.SIGTRAMP_FRAME else
                           frame.name() or f"{frame.pc():#x}")
                frame = frame.older()
        except gdb.error:
            pass
        return out

    def frame_args(self, function, names):
        try:
            frame: gdb.Frame | None = gdb.newest_frame()
            while frame is not None:
                if function in (frame.name() or ""):
                    return {n: int(frame.read_var(n)) for n in names}
                frame = frame.older()
        except (gdb.error, ValueError, RuntimeError):
            pass
        return {}

    def is_cortex_m(self):
        """False for a host build (rip) and for an ELF of another architecture (its header:
        elfinfo.abi, the port that serves it), whose traps the System Control Block does not
        describe."""
        progspace = gdb.current_progspace()
        path = progspace.filename if progspace else None
        abi = elfinfo.abi(path) if path else None
        if abi is not None:
            return ports.for_abi(abi) is ports.all_ports()[0]
        return register("rip") is None
