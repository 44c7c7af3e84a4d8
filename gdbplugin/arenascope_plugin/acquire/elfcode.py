"""The ELF's code as a file holds it, read once per file: its functions (STT_FUNC symbols with a
size), the bytes at any loaded address, the spans of code sections that are data (Arm's and RISC-V's
`$d` mapping symbols: literal pools and switch tables; ELF for the Arm Architecture 5.5.5, the RISC-V
ELF psABI "Mapping Symbol"), the entry point, whether the firmware uses the floating-point unit
(Arm build attributes: Tag_FP_arch / Tag_ABI_VFP_args) and its linker symbols. What the bytes mean
is the ports' (decode_code) and analyse/stackdepth.py's; nothing here reads target memory."""
import bisect
from dataclasses import dataclass, field

from arenascope_plugin.acquire import elfinfo
from arenascope_plugin.errors import ArenascopeError

TAG_FP_ARCH = 10     # Arm build attribute Tag_FP_arch (0: no FP instructions)
TAG_ABI_VFP_ARGS = 28  # Tag_ABI_VFP_args (1: arguments in VFP registers, the hard-float ABI)


class ElfCodeError(ArenascopeError, ValueError):
    """The ELF cannot be read as code: not an ELF, no symbol table, gone. Carries the reason."""


@dataclass
class Image:
    """One ELF's code (read(path)). functions: [(address, size, linker name)] sorted by address
    (Thumb bit clear); sections: [(address, bytes)] of every loaded section with contents; data:
    [(lo, hi)] sorted spans of code that are data; symbols: {linker name: value} of every symbol;
    objects: {address: size} of the data objects of known size; sections_named: {name: address}
    of the loaded sections; ram: [(lo, hi)] of the writable ones (NOBITS included)."""
    path: str
    entry: int
    abi: str | None
    functions: list = field(default_factory=list)
    sections: list = field(default_factory=list)
    data: list = field(default_factory=list)
    symbols: dict = field(default_factory=dict)
    objects: dict = field(default_factory=dict)
    sections_named: dict = field(default_factory=dict)
    ram: list = field(default_factory=list)
    fpu: bool = False
    _starts: list = field(default_factory=list)

    def function_at(self, addr: int) -> tuple[int, int, str] | None:
        """(address, size, name) of the function holding addr, or None."""
        i = bisect.bisect_right(self._starts, addr) - 1
        if i >= 0:
            lo, size, name = self.functions[i]
            if lo <= addr < lo + max(size, 1):
                return lo, size, name
        return None

    def starts_function(self, addr: int) -> bool:
        i = bisect.bisect_left(self._starts, addr)
        return i < len(self._starts) and self._starts[i] == addr

    def read(self, addr: int, length: int) -> bytes | None:
        """length bytes at addr from the section holding them, or None when no section does."""
        for lo, data in self.sections:
            if lo <= addr and addr + length <= lo + len(data):
                return data[addr - lo:addr - lo + length]
        return None

    def data_in(self, lo: int, hi: int) -> list[tuple[int, int]]:
        """The data spans (mapping symbols) that overlap [lo, hi), clipped to it."""
        i = max(bisect.bisect_right(self.data, (lo, lo)) - 1, 0)
        out = []
        for a, b in self.data[i:]:
            if a >= hi:
                break
            if b > lo:
                out.append((max(a, lo), min(b, hi)))
        return out


def read(path: str) -> Image:
    """The ELF at path as an Image, read once per file (elfinfo's cache); ElfCodeError when it
    cannot be read."""
    return _read(path)


@elfinfo._once_per_file  # pylint: disable=protected-access  (the one per-file cache)
def _read(path: str) -> Image:
    lib = elfinfo._elftools()  # pylint: disable=protected-access
    if lib is None:
        raise ElfCodeError("pyelftools is not installed (Debian: apt install python3-pyelftools)")
    ELFError, SH_FLAGS, ELFFile = lib
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            image = Image(path=path, entry=elf.header["e_entry"], abi=elfinfo.abi(path))
            symtab = elf.get_section_by_name(".symtab")
            if symtab is None:
                raise ElfCodeError(f"{path} has no symbol table (stripped?): the call graph needs the "
                                   "function symbols; give the unstripped ELF the build wrote")
            code, code_index = [], set()
            for i, s in enumerate(elf.iter_sections()):
                if s["sh_flags"] & SH_FLAGS.SHF_ALLOC and s["sh_size"]:
                    image.sections_named.setdefault(s.name, s["sh_addr"])
                    if s["sh_flags"] & SH_FLAGS.SHF_WRITE:
                        image.ram.append((s["sh_addr"], s["sh_addr"] + s["sh_size"]))
                if s["sh_flags"] & SH_FLAGS.SHF_ALLOC and s["sh_type"] != "SHT_NOBITS" and s["sh_size"]:
                    image.sections.append((s["sh_addr"], s.data()))
                    if s["sh_flags"] & SH_FLAGS.SHF_EXECINSTR:
                        code.append((s["sh_addr"], s["sh_addr"] + s["sh_size"]))
                        code_index.add(i)
            marks: list[tuple[int, str]] = []
            funcs: dict[int, tuple[int, int, str]] = {}   # start -> (start, size, name)
            for sym in symtab.iter_symbols():
                name, value, kind = sym.name, sym["st_value"], sym["st_info"]["type"]
                if name and kind not in ("STT_SECTION", "STT_FILE"):
                    image.symbols.setdefault(name, value)
                if kind == "STT_OBJECT" and sym["st_size"]:
                    image.objects.setdefault(value, sym["st_size"])
                if name[:2] in ("$d", "$t", "$a", "$x") and (len(name) == 2 or name[2] == ".") \
                        and sym["st_shndx"] in code_index:  # a mark in .debug_frame says nothing of code
                    marks.append((value, name[1]))
                elif kind == "STT_FUNC" and sym["st_size"] and sym["st_shndx"] != "SHN_UNDEF":
                    lo = value & ~1 if image.abi == "arm-eabi" else value
                    funcs.setdefault(lo, (lo, sym["st_size"], name))  # aliases: the first name
            image.functions = sorted(funcs.values())
            image._starts = [f[0] for f in image.functions]  # pylint: disable=protected-access
            image.data = _data_spans(sorted(set(marks)), code)
    except (OSError, ELFError) as exc:
        raise ElfCodeError(f"cannot read the ELF {path}: {exc}") from None
    if image.abi == "arm-eabi":
        attrs, _ = elfinfo.build_attributes(path)
        image.fpu = bool(attrs.get(TAG_FP_ARCH)) or attrs.get(TAG_ABI_VFP_ARGS) == 1
    return image


def _data_spans(marks: list[tuple[int, str]], code: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """[(lo, hi)] from a `$d` mark to the next mark of another kind or its code section's end."""
    out = []
    for i, (at, kind) in enumerate(marks):
        if kind != "d":
            continue
        section_end = next((hi for lo, hi in code if lo <= at < hi), None)
        if section_end is None:
            continue
        nxt = next((a for a, k in marks[i + 1:] if k != "d" and a > at), section_end)
        out.append((at, min(nxt, section_end)))
    return sorted(out)
