"""What the firmware is, as opposed to what its memory holds (acquire/reader.py): the Symbols
and Core interfaces every stage above acquire/ uses. Two implementations each:
- through GDB (acquire/gdbtarget.py: GdbSymbols, GdbCore), the loaded ELF and the process's
  addresses (a relocated position-independent host build included);
- without GDB (acquire/elfsymbols.py: ElfSymbols, on the ELF file with pyelftools; CoreOverTcl in
  acquire/openocd.py, the core's registers through OpenOCD when it is halted).

Addresses are ints; sizes are bytes. Symbol names are the linker's (mangled for C++: the
ELF's .symtab names; GDB accepts them too); names given back (name_at) are demangled, as GDB
prints them. Nothing here writes target memory or calls a target function.
"""
import os
from collections.abc import Iterable

from arenascope_plugin.acquire import dwarfpointers, elfinfo

Range = tuple[int, int, str]


class Symbols:
    """The firmware's ELF: symbols, types and memory map. elf_path: the ELF on disk (or None);
    file_addresses: whether the file's addresses are the target's (False for a relocated PIE)."""
    elf_path: str | None = None
    file_addresses: bool = True
    # Memory the user named (`set arena memory`, the tool's --memory: acquire/targetmemory.parse):
    # [(low, high, name)]; the front end sets it.
    declared_memory: tuple = ()

    @property
    def memo(self) -> dict:
        """What the stages above keep with these symbols (decode.tflm.layout's Layout)."""
        if "_memo" not in self.__dict__:
            self.__dict__["_memo"] = {}
        return self.__dict__["_memo"]

    def address(self, name: str) -> int | None:
        """The address of the global symbol `name` (linker name), or None."""
        raise NotImplementedError

    def name_at(self, addr: int) -> tuple[str, int] | None:
        """(demangled name, offset into it) of the symbol holding addr, or None."""
        raise NotImplementedError

    def line_at(self, addr: int) -> tuple[str, int] | None:
        """(source file, line) of a code address from the line table, or None."""
        raise NotImplementedError

    def members(self, type_name: str, wanted: Iterable[str]) -> dict[str, tuple[int, int | None]] | None:
        """{member: (offset, size)} of the wanted members of the type (base classes included),
        from the debug information; None when the type is not defined."""
        raise NotImplementedError

    def base_offset(self, type_name: str, base_name: str) -> int | None:
        """The offset of base class base_name inside type_name, or None."""
        raise NotImplementedError

    def pointer_size(self) -> int:
        """sizeof(void *) on the target, in bytes."""
        raise NotImplementedError

    def type_size(self, name: str) -> int | None:
        """sizeof(name) from the debug information, or None."""
        raise NotImplementedError

    def object_size(self, name: str) -> int | None:
        """The size of the data object `name` (as name_at gives it), or None."""
        raise NotImplementedError

    def ram_ranges(self) -> tuple[list[Range], str]:
        """([(low, high, section)], why empty) of the firmware's RAM (writable sections)."""
        raise NotImplementedError

    def stack_bounds(self) -> tuple[int, int, str] | None:
        """(low, high, "LOW/HIGH symbol names") from the linker script's stack symbols
        (elfinfo.STACK_SYMBOLS; else a top and a size, STACK_TOP_AND_SIZE_SYMBOLS: "TOP - SIZE"), or
        None."""
        for low, high in elfinfo.STACK_SYMBOLS:
            lo, hi = self.address(low), self.address(high)
            if lo is not None and hi is not None and hi > lo:
                return lo, hi, f"{low}/{high}"
        for top, size in elfinfo.STACK_TOP_AND_SIZE_SYMBOLS:
            hi, n = self.address(top), self.address(size)
            if hi is not None and n and n <= hi:
                return hi - n, hi, f"{top} - {size}"
        return None

    def scan_ranges(self) -> list[Range]:
        """The ranges a scan for an object (descriptor, interpreter) reads: the RAM sections."""
        return list(self.ram_ranges()[0])

    # What only the ELF file says (data objects, their bytes, sections), in file addresses:
    # empty when there is no file, or when its addresses are not the target's.
    def _file(self) -> str | None:
        path = self.elf_path
        return path if path and os.path.exists(path) and self.file_addresses else None

    def object_at(self, addr: int) -> tuple[str, int, int] | None:
        """(linker name, start, size) of the ELF's data object holding addr, or None."""
        return elfinfo.object_at(self._file(), addr) if self._file() else None

    def object_bytes(self, name: str) -> tuple[int, bytes | None]:
        """(size, the ELF file's bytes of it or None); ValueError when there is no such object."""
        if not self.elf_path or not os.path.exists(self.elf_path):
            raise ValueError("the ELF is not on disk")
        return elfinfo.object_bytes(self.elf_path, name)

    def section_bytes(self, name: str, cap: int) -> tuple[bytes, int, str]:
        """(up to cap bytes of the ELF's section `name`, its size, why-empty): elfinfo.section_bytes.
        Relocation does not matter: the bytes are the file's."""
        if not self.elf_path or not os.path.exists(self.elf_path):
            return b"", 0, "the ELF is not on disk"
        return elfinfo.section_bytes(self.elf_path, name, cap)

    def constant_ranges(self) -> list[tuple[int, int]]:
        """[(low, high)] of the ELF's allocated read-only sections that hold bytes (code and
        constants: elfinfo.flash_bytes): memory the firmware never writes, so a live view reads a
        word of it once (acquire/batch.py). [] without the file."""
        if not self._file():
            return []
        return [(addr, addr + len(data)) for addr, data, _name in elfinfo.flash_bytes(self._file())]

    def data_objects(self) -> list[tuple[str, int, int, str]]:
        return elfinfo.data_objects(self._file()) if self._file() else []

    def objects_of_size(self, size: int) -> list[tuple[str, int]]:
        return elfinfo.objects_of_size(self._file(), size) if self._file() else []

    def heap_span(self) -> tuple[int, int, str] | None:
        """(start, end, "START/END symbol names") of the heap from the linker symbols
        (elfinfo.HEAP_START_SYMBOLS / HEAP_END_SYMBOLS; without an end symbol, the stack's low
        bound), or None. Read once per Symbols (memo): every command asks it several times."""
        if "heap-span" not in self.memo:
            self.memo["heap-span"] = self._heap_span()
        return self.memo["heap-span"]

    def _heap_span(self) -> tuple[int, int, str] | None:
        start = next(((n, a) for n in elfinfo.HEAP_START_SYMBOLS if (a := self.address(n)) is not None), None)
        if start is None:
            return None
        end = next(((n, a) for n in elfinfo.HEAP_END_SYMBOLS if (a := self.address(n)) is not None), None)
        if end is None:
            stack = self.stack_bounds()
            end = (stack[2].split("/")[0], stack[0]) if stack else None
        if end is None or end[1] <= start[1]:
            return None
        return start[1], end[1], f"{start[0]}/{end[0]}"

    def target_memory(self) -> list[Range]:
        """[(low, high, name)] of the memory the target has beyond the ELF's sections (external
        RAM, other banks): what the user named (declared_memory; GdbSymbols adds GDB's memory map,
        acquire/targetmemory.py), each named as messages say it: "psram (named by the user)"."""
        return [(lo, hi, f"{name} (named by the user)") for lo, hi, name in self.declared_memory] + \
            list(self.memo.get("inferred-memory", []))

    def infer_memory(self, lo: int, hi: int, what: str) -> None:
        """Counts [lo, hi) as memory the target has, named `what`, for this command: memory no
        source describes that verified objects were found in (agentless: an interpreter a typed
        pointer leads to, with its arena)."""
        self.memo.setdefault("inferred-memory", []).append((lo, hi, what))
        for key in ("memories", "target-memory"):
            self.memo.pop(key, None)

    def memories(self) -> list[tuple[int, int, str, str]]:
        """[(low, high, kind, what)] of every memory the firmware has, most specific first, kind
        "ram" or "flash": the target memory named (targetmemory: "psram (named by the user)"), the
        ELF's RAM sections, the heap its linker symbols bound (from the end of any section linked
        inside it, such as a NOLOAD arena after `end`; a section holding the whole heap is the
        heap's own), its flash. The one list `arena whereis`, the bounds rule, the stack rule and
        TFLM's object checks name memory by. Kept for the command (memo)."""
        if "memories" not in self.memo:
            heap = self.heap_span()
            sections = self.ram_ranges()[0]
            own = [s for s in sections if heap and s[0] <= heap[0] and heap[1] <= s[1]]
            out = [(lo, hi, "ram", what) for lo, hi, what in self.target_memory()]
            out += [(lo, hi, "ram", f"RAM ({name})") for lo, hi, name in sections if (lo, hi, name) not in own]
            if heap:
                start = max([heap[0]] + [hi for lo, hi, _ in sections if heap[0] <= lo < heap[1] and
                                         (lo, hi, _) not in own])
                out += [(start, heap[1], "ram", f"the heap ({heap[2]})")] if start < heap[1] else []
            out += [(lo, hi, "ram", f"RAM ({name})") for lo, hi, name in own]
            flash = elfinfo.memory_map(self._file())["flash"] if self._file() else []
            out += [(lo, hi, "flash", "flash") for lo, hi in flash]
            self.memo["memories"] = out
        return list(self.memo["memories"])

    def memory_spans(self) -> list[Range]:
        """memories() as [(low, high, what)]: what `arena whereis`, `$arena_owner()` and the fault's
        notes name an address's memory by."""
        return [(lo, hi, what) for lo, hi, _kind, what in self.memories()]

    def memory_of(self, addr: int) -> str | None:
        """What memory holds addr (memories' `what`), or None when none the firmware describes."""
        return next((what for lo, hi, _kind, what in self.memories() if lo <= addr < hi), None)

    def memory_map(self) -> dict[str, list]:
        """{"code", "flash", "ram": [(lo, hi)], "heap": [(lo, hi)], "target": [(lo, hi)]}: the ELF's
        allocated sections (elfinfo.memory_map), the heap its linker symbols bound and the target
        memory named (target_memory), which are RAM too (an arena or an interpreter the
        application allocates lives there)."""
        out = elfinfo.memory_map(self._file()) if self._file() else {"code": [], "flash": [], "ram": []}
        heap = self.heap_span() if out["ram"] else None
        out["heap"] = [heap[:2]] if heap else []
        out["target"] = [(lo, hi) for lo, hi, _ in self.target_memory()]
        out["ram"] = out["ram"] + out["heap"] + out["target"]
        return out

    def pointer_paths(self, class_name: str) -> list[tuple[str, int, list[int]]]:
        """Where the ELF's global variables hold typed pointers to class_name (dwarfpointers:
        [(label, address, chain)]); [] without the file or its DWARF."""
        path = self._file()
        return dwarfpointers.pointer_paths(path, class_name) if path else []

    def vtables(self, classes: Iterable[str]) -> dict[str, tuple[int, int]]:
        return elfinfo.vtables(self._file(), classes) if self._file() else {}

    def has_debug_info(self) -> bool:
        """Whether the ELF on disk carries debug information at all (False: stripped, or no file)."""
        return bool(self.elf_path and os.path.exists(self.elf_path) and elfinfo.has_debug_info(self.elf_path))

    def abi(self) -> str | None:
        """The C ABI of the firmware's target (elfinfo.abi: "arm-eabi", "riscv32-ilp32", ...), or
        None when the ELF is not on disk."""
        if not self.elf_path or not os.path.exists(self.elf_path):
            return None
        return elfinfo.abi(self.elf_path)

    def build_attributes(self) -> tuple[dict[int, int | str], str]:
        """({tag: value}, why-empty) of the ELF's Arm build attributes (elfinfo.build_attributes)."""
        if not self.elf_path or not os.path.exists(self.elf_path):
            return {}, "the ELF is not on disk"
        return elfinfo.build_attributes(self.elf_path)

    def functions_present(self, names: Iterable[str]) -> list[str]:
        """Which of these functions (linker names) the ELF links."""
        if not self.elf_path or not os.path.exists(self.elf_path):
            return [n for n in names if self.address(n) is not None]
        return elfinfo.function_names(self.elf_path, names)


class Core:
    """The core's registers and where it is stopped. All None / empty while it runs."""

    def register(self, name: str) -> int | None:
        """A core register (sp, pc, lr, xpsr, msp, psp) when readable now, else None."""
        raise NotImplementedError

    def frames(self) -> list[str]:
        """The call chain's function names, newest first ("<exception frame>" where the unwinder
        crossed an exception entry); [] when unknown."""
        raise NotImplementedError

    def frames_complete(self) -> bool:
        """Whether frames() reaches the outermost caller (a real unwinder), so a function absent from
        it was not called; False when it may stop early (the PC's function alone)."""
        return True

    def frame_args(self, function: str, names: Iterable[str]) -> dict[str, int]:
        """{argument: value} of the newest frame whose function's name contains `function`, for
        the names the debug information gives; {} when unknown."""
        return {}

    def is_cortex_m(self) -> bool:
        """False for a host build (no SCB to read)."""
        return True


def short_name(name: str) -> str:
    """A demangled function name as GDB's frame.name() gives it: no parameter list, no " const",
    no " [clone .constprop.0]" ("tflite::AbortImpl()" -> "tflite::AbortImpl"), so call chains read
    the same whichever Core unwound them."""
    name = name.split(" [clone ")[0].removesuffix(" const")
    if not name.endswith(")"):
        return name
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(name[i], 0)
        if depth == 0:
            return name if not i or name[:i].endswith("operator") else name[:i]
    return name


def pc_frames(symbols: Symbols | None, pc: int | None) -> list[str]:
    """A call chain of the PC's function alone ([] when unknown): a Core with no unwinder."""
    named = symbols.name_at(pc & ~1) if pc is not None and symbols is not None else None
    return [short_name(named[0])] if named else []


class TableSymbols(Symbols):
    """Symbols from a table (a memory image or a dump with its symbol addresses, and the tests):
    {name: address}, RAM ranges [(low, high, name)]; nothing else known."""

    def __init__(self, addresses: dict[str, int] | None = None, ram: Iterable[Range] | None = None,
                 elf_path: str | None = None, layout: object = None, pointer: int = 4) -> None:
        """layout: a decode.tflm.Layout to use as the firmware's (tests of TFLM's objects)."""
        self.addresses, self.ram = dict(addresses or {}), list(ram or [])
        self.elf_path, self.file_addresses = elf_path, elf_path is not None
        self.pointer = pointer
        if layout is not None:
            self.memo["tflm-layout"] = layout

    def address(self, name: str) -> int | None:
        return self.addresses.get(name)

    def name_at(self, addr: int) -> tuple[str, int] | None:
        return None

    def line_at(self, addr: int) -> tuple[str, int] | None:
        return None

    def members(self, type_name: str, wanted: Iterable[str]) -> dict[str, tuple[int, int | None]] | None:
        return None  # no debug information: a table of symbols only

    def base_offset(self, type_name: str, base_name: str) -> int | None:
        return None

    def pointer_size(self) -> int:
        return self.pointer

    def type_size(self, name: str) -> int | None:
        return None

    def object_size(self, name: str) -> int | None:
        return None

    def ram_ranges(self) -> tuple[list[Range], str]:
        return list(self.ram), "" if self.ram else "no RAM ranges given"


class FixedCore(Core):
    """A core whose registers are given ({} while it runs): dumps and tests."""

    def __init__(self, regs: dict[str, int] | None = None, frames: Iterable[str] | None = None,
                 cortex_m: bool = True) -> None:
        self.regs, self._frames, self.cortex_m = dict(regs or {}), list(frames or []), cortex_m

    def register(self, name: str) -> int | None:
        return self.regs.get(name)

    def frames(self) -> list[str]:
        return list(self._frames)

    def is_cortex_m(self) -> bool:
        return self.cortex_m
