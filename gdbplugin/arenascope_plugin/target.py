"""The GDB side: the only module that touches gdb for memory, symbols and target state.
Read-only: nothing here writes target memory or calls a function on the target."""
import gdb  # pylint: disable=import-error

from .reader import MemoryReader, MemoryReadError

# Linker-script names of the stack's bounds, (low, high), most common first.
STACK_SYMBOLS = [("__StackLimit", "__StackTop"), ("_sstack", "_estack"), ("__stack_start__", "__stack_end__"),
                 ("_stack_start", "_stack_end")]


class TargetError(Exception):
    """The target cannot be read now; the message says why and what to do."""


class GdbReader(MemoryReader):
    """Reads the selected inferior's memory through GDB (any GDB server). Counts what it reads
    in the class attributes `calls` and `bytes` (tools/bench_plugin.py reports them)."""
    name = "target"
    calls = 0
    bytes = 0

    def read(self, addr, length):
        GdbReader.calls += 1
        GdbReader.bytes += length
        try:
            return gdb.selected_inferior().read_memory(addr, length).tobytes()
        except gdb.MemoryError as exc:
            raise MemoryReadError(addr, length, str(exc)) from None
        except gdb.error as exc:
            raise MemoryReadError(addr, length, str(exc)) from None


def check_readable():
    """Raises TargetError unless GDB can read the target's memory now."""
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
        raise TargetError(f"GDB cannot query the target: {exc}") from None
    if inferior.pid == 0 or not threads:
        raise TargetError("the target is not running: connect to it (`target remote HOST:PORT`) or start it "
                          "(`run`, `starti`); a loaded ELF alone has no RAM to read")
    if thread is not None and thread.is_running():
        raise running


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
        return int(gdb.parse_and_eval(f"${name}")) & 0xFFFFFFFFFFFFFFFF
    except gdb.error:
        return None


def parse_address(text):
    """An address expression (number, symbol, expression) evaluated by GDB."""
    try:
        return int(gdb.parse_and_eval(text).cast(gdb.lookup_type("unsigned long long")))
    except gdb.error as exc:
        raise TargetError(f"cannot evaluate {text!r} as an address: {exc}") from None


def elf_ram_ranges():
    """[(lo, hi, section name)] of the loaded ELF's allocated, writable sections (the RAM the
    firmware uses), read from the ELF file itself with pyelftools. Empty without an ELF."""
    progspace = gdb.current_progspace()
    path = progspace.filename if progspace else None
    if not path:
        return []
    try:
        from elftools.elf.constants import SH_FLAGS  # pylint: disable=import-outside-toplevel
        from elftools.elf.elffile import ELFFile  # pylint: disable=import-outside-toplevel
    except ImportError:
        return []
    ranges = []
    with open(path, "rb") as f:
        elf = ELFFile(f)
        if elf["e_type"] != "ET_EXEC":
            return []  # a relocatable (PIE) process image: its section addresses are not its RAM
        for s in elf.iter_sections():
            flags = s["sh_flags"]
            if flags & SH_FLAGS.SHF_ALLOC and flags & SH_FLAGS.SHF_WRITE and s["sh_size"]:
                ranges.append((s["sh_addr"], s["sh_addr"] + s["sh_size"], s.name))
    return ranges


def stack_symbols():
    """(low, high, "symbol names") from the linker script's stack symbols, or None."""
    for low, high in STACK_SYMBOLS:
        lo, hi = symbol_address(low), symbol_address(high)
        if lo is not None and hi is not None and hi > lo:
            return lo, hi, f"{low}/{high}"
    return None
