"""Symbols without GDB: the firmware's ELF file read with pyelftools (Debian python3-pyelftools).
The standalone `arenascope` tool uses it; the file's addresses are the target's (a Cortex-M
firmware is linked where it runs). Names are demangled with binutils' c++filt when present."""
import bisect
import os
import shutil
import subprocess
from collections.abc import Iterable

from arenascope_plugin.acquire import dwarflayout, elfinfo
from arenascope_plugin.acquire.symbols import Range, Symbols
from arenascope_plugin.errors import TargetError


def _demangle(names):
    """{mangled: demangled} through c++filt (one process for all); names kept when it is missing."""
    tool = shutil.which("c++filt") or shutil.which("arm-none-eabi-c++filt")
    if not names or tool is None:
        return {n: n for n in names}
    try:
        out = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True, text=True, timeout=30,
                             check=True).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return {n: n for n in names}
    return dict(zip(names, out, strict=True)) if len(out) == len(names) else {n: n for n in names}


class ElfSymbols(Symbols):
    """The Symbols of the ELF at `path`. OSError / ValueError (saying why) from the constructor
    when it is not a readable ELF. A stripped ELF is accepted: no symbol is then known (stripped
    is True), and the descriptor is found by a scan of its RAM sections or its given address."""

    def __init__(self, path: str) -> None:
        self.elf_path: str = os.path.abspath(path)
        self.file_addresses = True
        self._table: dict[str, tuple[int, int, str]] = {}   # name -> (address, size, STT_ kind)
        problem = elfinfo.not_an_elf(self.elf_path)
        if problem:
            raise ValueError(problem)
        for name, value, size, kind in elfinfo._symbols_of(self.elf_path):  # pylint: disable=protected-access
            if name and kind in ("STT_FUNC", "STT_OBJECT", "STT_NOTYPE") and name not in self._table:
                self._table[name] = (value & ~1 if kind == "STT_FUNC" else value, size, kind)
        self.stripped = not self._table
        self._sorted: tuple[list[int], list[tuple[int, int, str]]] | None = None
        self._names: dict[str, str] = {}
        self._lines: tuple[list[int], list[tuple[int, str | None, int, bool]]] | None = None
        self._types: dwarflayout.DwarfTypes | None = None
        self._pointer = elfinfo.pointer_size(self.elf_path)

    def address(self, name: str) -> int | None:
        found = self._table.get(name)
        return found[0] if found is not None else None

    def _index(self):
        if self._sorted is None:
            entries = sorted((v, -z, n) for n, (v, z, k) in self._table.items()
                             if k in ("STT_FUNC", "STT_OBJECT") and not n.startswith("$"))
            self._sorted = ([e[0] for e in entries], entries)
        return self._sorted

    def name_at(self, addr: int) -> tuple[str, int] | None:
        starts, entries = self._index()
        i = bisect.bisect_right(starts, addr) - 1
        best = None
        for j in range(i, max(-1, i - 64), -1):  # the sized symbol that holds addr (the innermost start)
            value, negsize, name = entries[j]
            if negsize and addr < value - negsize:
                best = (name, addr - value)
                break
        if best is None:
            return None
        return self._demangled().get(best[0], best[0]), best[1]

    def _demangled(self):
        """{mangled: demangled} of every C++ symbol (one c++filt run, on first use)."""
        if not self._names:
            self._names = _demangle(sorted(n for n in self._table if n.startswith("_Z"))) or {"": ""}
        return self._names

    def _line_table(self):
        """([addresses], sorted [(address, file, line, is_stmt)]) from the DWARF line programs
        (end_sequence rows end a run)."""
        if self._lines is not None:
            return self._lines
        rows: list[tuple[int, str | None, int, bool]] = []
        try:
            from elftools.elf.elffile import ELFFile  # pylint: disable=import-outside-toplevel
            with open(self.elf_path, "rb") as f:
                elf = ELFFile(f)
                if elf.has_dwarf_info():
                    dwarf = elf.get_dwarf_info()
                    for cu in dwarf.iter_CUs():
                        prog = dwarf.line_program_for_CU(cu)
                        if prog is None:
                            continue
                        files, dirs = prog["file_entry"], prog["include_directory"]
                        v5 = prog["version"] >= 5
                        for entry in prog.get_entries():
                            st = entry.state
                            if st is None:
                                continue
                            if st.end_sequence:
                                rows.append((st.address, None, 0, True))
                                continue
                            index = st.file if v5 else st.file - 1
                            if not 0 <= index < len(files):
                                continue
                            fe = files[index]
                            name = fe.name.decode(errors="replace")
                            if fe.dir_index and fe.dir_index - (0 if v5 else 1) < len(dirs) and \
                                    not os.path.isabs(name):
                                name = os.path.join(dirs[fe.dir_index - (0 if v5 else 1)].decode(errors="replace"),
                                                    name)
                            rows.append((st.address, name, st.line, bool(st.is_stmt)))
        except (ImportError, OSError, ValueError, KeyError, IndexError, AttributeError):
            rows = []
        rows.sort(key=lambda r: (r[0], r[1] is not None))  # a sequence's end before the next one's start
        self._lines = ([r[0] for r in rows], rows)
        return self._lines

    def line_at(self, addr: int) -> tuple[str, int] | None:
        starts, rows = self._line_table()
        i = bisect.bisect_right(starts, addr) - 1
        # GDB's rule (symtab.c, find_pc_sect_line): the last row at or below addr; when it is not
        # a statement, the statement row at the same address before it, if any.
        j = i
        while j > 0 and not rows[j][3] and rows[j - 1][0] == rows[i][0] and rows[j - 1][1] is not None:
            j -= 1
        if j >= 0 and rows[j][3] and rows[j][0] == rows[i][0]:
            i = j
        if i < 0 or rows[i][1] is None or not rows[i][2]:
            return None
        return rows[i][1], rows[i][2]

    def _dwarf(self):
        """The ELF's types (read once); TargetError without debug information."""
        if self._types is None:
            try:
                self._types = dwarflayout.DwarfTypes(self.elf_path)
            except (dwarflayout.LayoutError, OSError) as exc:
                raise TargetError(f"agentless mode: {exc}") from None
        return self._types

    def members(self, type_name: str, wanted: Iterable[str]) -> dict[str, tuple[int, int | None]] | None:
        try:
            return self._dwarf().members(type_name, wanted)
        except TargetError:
            return None

    def base_offset(self, type_name: str, base_name: str) -> int | None:
        try:
            return self._dwarf().base_offset(type_name, base_name)
        except TargetError:
            return None

    def pointer_size(self) -> int:
        return self._pointer

    def type_size(self, name: str) -> int | None:
        try:
            return self._dwarf().size(name)
        except TargetError:
            return None

    def object_size(self, name: str) -> int | None:
        mangled = next((n for n, d in self._demangled().items() if d == name), name)
        found = self._table.get(mangled)
        return found[1] if found is not None and found[1] else None

    def ram_ranges(self) -> tuple[list[Range], str]:
        return elfinfo.ram_ranges(self.elf_path)
