"""What the firmware's ELF file says, read with pyelftools (no GDB): its RAM sections and its
symbols. The GDB plugin uses it for the loaded ELF; the standalone `arenascope live` for --elf."""
import os

# Linker-script names of the stack's bounds, (low, high), most common first.
STACK_SYMBOLS = [("__StackLimit", "__StackTop"), ("_sstack", "_estack"), ("__stack_start__", "__stack_end__"),
                 ("_stack_start", "_stack_end")]
# Linker scripts that give the stack's top and its size instead, (top, size): picolibc's
# picolibc.ld (`__stack` = the end of RAM, `__stack_size` an absolute symbol whose value is the
# size, 0x800 unless the application defines it), on Arm and RISC-V alike.
STACK_TOP_AND_SIZE_SYMBOLS = [("__stack", "__stack_size")]
# The heap's bounds as linker scripts name them (CMSIS's startup files: __HeapBase/__HeapLimit;
# newlib's _sbrk grows from `end`; ST's and others': _heap_start/_heap_end ...). Without a limit
# symbol the heap runs up to the stack's low bound (newlib's _sbrk stops at the stack pointer).
HEAP_START_SYMBOLS = ("__heap_start", "_heap_start", "__heap_start__", "__HeapBase", "__heap_base", "end", "_end",
                      "__end__")
HEAP_END_SYMBOLS = ("__HeapLimit", "__heap_limit", "_heap_end", "__heap_end", "__heap_end__", "_eheap")


# (function, path, mtime, size) -> what it read: each ELF file is parsed once a version
_CACHE: dict[tuple, object] = {}


def _fresh(value):
    """A copy of a cached list, dict or (list, text) pair: callers may extend what they get."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_fresh(v) for v in value)
    return value


def _once_per_file(fn):
    """Caches fn(path) by the file's identity (a rebuilt ELF is read again)."""
    def cached(path):
        try:
            st = os.stat(path)
        except OSError:
            return fn(path)
        key = (fn.__name__, path, st.st_mtime_ns, st.st_size)
        if key not in _CACHE:
            _CACHE[key] = fn(path)
        return _fresh(_CACHE[key])
    cached.__doc__, cached.__name__ = fn.__doc__, fn.__name__
    return cached


def _elftools():
    try:
        from elftools.common.exceptions import ELFError  # pylint: disable=import-outside-toplevel
        from elftools.elf.constants import SH_FLAGS  # pylint: disable=import-outside-toplevel
        from elftools.elf.elffile import ELFFile  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    return ELFError, SH_FLAGS, ELFFile


@_once_per_file
def ram_ranges(path):
    """([(lo, hi, section name)], why-empty) for the ELF's allocated, writable sections (the RAM
    the firmware uses). The list is empty, and the reason says why, for a position-independent
    executable (its section addresses are not its RAM), or when the file is gone or unreadable."""
    lib = _elftools()
    if lib is None:
        return [], "pyelftools is not installed (Debian: python3-pyelftools)"
    ELFError, SH_FLAGS, ELFFile = lib
    ranges = []
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            if elf["e_type"] != "ET_EXEC":
                return [], f"{path} is position-independent: its section addresses are not its RAM"
            for s in elf.iter_sections():
                flags = s["sh_flags"]
                if flags & SH_FLAGS.SHF_ALLOC and flags & SH_FLAGS.SHF_WRITE and s["sh_size"]:
                    ranges.append((s["sh_addr"], s["sh_addr"] + s["sh_size"], s.name))
    except (OSError, ELFError) as exc:
        return [], f"cannot read the ELF {path}: {exc}"
    return ranges, "" if ranges else f"{path} has no writable sections"


def symbols(path, names):
    """{name: address} of the wanted symbols the ELF's symbol table holds (absent ones left out).
    Raises OSError / ValueError (with the reason) for a file that is not a readable ELF."""
    lib = _elftools()
    if lib is None:
        raise ValueError("pyelftools is not installed (Debian: python3-pyelftools)")
    ELFError, _, ELFFile = lib
    out = {}
    try:
        with open(path, "rb") as f:
            table = ELFFile(f).get_section_by_name(".symtab")
            if table is None:
                raise ValueError(f"{path} has no symbol table (stripped?): link it without -s")
            for name in names:
                found = table.get_symbol_by_name(name)
                if found:
                    out[name] = found[0]["st_value"]
    except ELFError as exc:
        raise ValueError(f"{path} is not an ELF file: {exc}") from None
    return out


@_once_per_file
def _symbols_of(path):
    """[(name, value, size, type)] of the ELF's symbol table ([] without pyelftools or symbols)."""
    lib = _elftools()
    if lib is None:
        return []
    with open(path, "rb") as f:
        symtab = lib[2](f).get_section_by_name(".symtab")
        return [(s.name, s["st_value"], s["st_size"], s["st_info"]["type"])
                for s in (symtab.iter_symbols() if symtab else [])]


def object_at(path, address):
    """(name, start, size) of the ELF's data object (STT_OBJECT of known size) holding address,
    or None."""
    return next(((n, v, z) for n, v, z, t in _symbols_of(path) if t == "STT_OBJECT" and z and v <= address < v + z),
                None)


def object_bytes(path, name):
    """(size, bytes) of the data object `name`: its bytes as the ELF file holds them (from an
    allocated PROGBITS section: the image, not debug data), or None when the file has no bytes
    for it (e.g. in .bss). ValueError when there is no such object of known size."""
    lib = _elftools()
    if lib is None:
        raise ValueError("pyelftools is not installed (Debian: python3-pyelftools)")
    found = next(((v, z) for n, v, z, t in _symbols_of(path) if n == name and z and t == "STT_OBJECT"), None)
    if found is None:
        raise ValueError(f"'{name}' is not a data object of known size")
    start, size = found
    with open(path, "rb") as f:
        for sec in lib[2](f).iter_sections():
            lo = sec["sh_addr"]
            if sec["sh_type"] == "SHT_PROGBITS" and sec["sh_flags"] & 0x2 and lo <= start and \
                    start + size <= lo + sec["sh_size"]:  # SHF_ALLOC
                return size, sec.data()[start - lo:start - lo + size]
    return size, None


def section_bytes(path, name, cap):
    """(up to `cap` bytes of the ELF section `name` from the file, its whole size, why-empty): b"", 0
    and the reason when the section is absent or the file unreadable. For non-allocated sections a
    firmware keeps for the host (ARENASCOPE_REGION_NAMES' names); a larger section is cut, never
    read whole."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return b"", 0, f"cannot read the ELF {path}: {exc}"
    key = ("section_bytes", path, st.st_mtime_ns, st.st_size, name, cap)
    if key not in _CACHE:
        _CACHE[key] = _section_bytes(path, name, cap)
    return _CACHE[key]


def _section_bytes(path, name, cap):
    lib = _elftools()
    if lib is None:
        return b"", 0, "pyelftools is not installed (Debian: python3-pyelftools)"
    ELFError, _, ELFFile = lib
    try:
        with open(path, "rb") as f:
            sec = ELFFile(f).get_section_by_name(name)
            if sec is None or sec["sh_type"] == "SHT_NOBITS":
                return b"", 0, f"{path} has no section {name}"
            size = sec["sh_size"]
            f.seek(sec["sh_offset"])
            return f.read(min(size, cap)), size, ""
    except (OSError, ELFError) as exc:
        return b"", 0, f"cannot read the ELF {path}: {exc}"


def data_objects(path):
    """[(name, address, size, type)] of the ELF's data objects of known size."""
    return [(n, v, z, t) for n, v, z, t in _symbols_of(path) if t == "STT_OBJECT" and z]


def objects_of_size(path, size):
    """[(name, address)] of the ELF's data objects exactly `size` bytes long."""
    return [(n, v) for n, v, z, t in _symbols_of(path) if t == "STT_OBJECT" and z == size]


@_once_per_file
def memory_map(path):
    """{"code": [(lo, hi)], "flash": [(lo, hi)], "ram": [(lo, hi)]} of the ELF's allocated sections:
    executable ones, read-only ones (code included: what a pointer into flash may point at) and
    writable ones. Empty lists without pyelftools or for an unreadable file."""
    out: dict[str, list[tuple[int, int]]] = {"code": [], "flash": [], "ram": []}
    lib = _elftools()
    if lib is None:
        return out
    ELFError, SH_FLAGS, ELFFile = lib
    try:
        with open(path, "rb") as f:
            for s in ELFFile(f).iter_sections():
                flags, lo, size = s["sh_flags"], s["sh_addr"], s["sh_size"]
                if not flags & SH_FLAGS.SHF_ALLOC or not size:
                    continue
                span = (lo, lo + size)
                if flags & SH_FLAGS.SHF_WRITE:
                    out["ram"].append(span)
                else:
                    out["flash"].append(span)
                    if flags & SH_FLAGS.SHF_EXECINSTR:
                        out["code"].append(span)
    except (OSError, ELFError):
        pass
    return out


@_once_per_file
def flash_bytes(path):
    """[(address, bytes, section name)] of the ELF's allocated, read-only sections that hold bytes
    (code, constants, .data's initial image is not among them: it is in RAM): what the board's
    flash holds when it runs this ELF. [] without pyelftools or for an unreadable file."""
    lib = _elftools()
    if lib is None:
        return []
    ELFError, SH_FLAGS, ELFFile = lib
    out = []
    try:
        with open(path, "rb") as f:
            for s in ELFFile(f).iter_sections():
                flags = s["sh_flags"]
                if flags & SH_FLAGS.SHF_ALLOC and not flags & SH_FLAGS.SHF_WRITE and s["sh_type"] != "SHT_NOBITS" \
                        and s["sh_size"]:
                    out.append((s["sh_addr"], s.data(), s.name))
    except (OSError, ELFError):
        return []
    return out


VTABLE_PREFIX = "_ZTV"  # Itanium C++ ABI 5.1: every vtable's mangled name begins so
TYPEINFO_PREFIX = "_ZTI"  # ... and every typeinfo object's (5.1.4)
CXX_PREFIX = "_Z"       # ... and every mangled C++ name (a C function's linker name is its own)


def itanium_vtable(qualified):
    """The mangled name of `vtable for NS::Class` (Itanium C++ ABI 5.1: _ZTV + nested name)."""
    parts = qualified.split("::")
    nested = "".join(f"{len(p)}{p}" for p in parts)
    return f"{VTABLE_PREFIX}N{nested}E" if len(parts) > 1 else f"{VTABLE_PREFIX}{nested}"


def vtables(path, classes):
    """{class: (vtable address, size)} of the classes' vtables the ELF's symbol table holds."""
    wanted = {itanium_vtable(c): c for c in classes}
    return {wanted[n]: (v, z) for n, v, z, _ in _symbols_of(path) if n in wanted}


@_once_per_file
def pointer_size(path):
    """sizeof(void *) of the ELF's target: 4 for ELF32, 8 for ELF64 (4 when unreadable)."""
    lib = _elftools()
    if lib is None:
        return 4
    try:
        with open(path, "rb") as f:
            return lib[2](f).elfclass // 8
    except (OSError, lib[0]):
        return 4


# The C ABIs whose data layout arenascope tells apart (tflm_profile's measured layouts are per
# ABI): ELF e_machine and class -> a name. arm-none-eabi's enums are short (1 B when they fit),
# RISC-V's and Xtensa's are int-sized; pointers are 4 B on all three.
_ABIS = {("EM_ARM", 32): "arm-eabi", ("EM_RISCV", 32): "riscv32-ilp32", ("EM_XTENSA", 32): "xtensa",
         ("EM_X86_64", 64): "x86_64-sysv", ("EM_AARCH64", 64): "aarch64"}


@_once_per_file
def abi(path):
    """The C ABI of the ELF's target (_ABIS' names, else "MACHINE/CLASS"), or None when the
    file cannot be read."""
    lib = _elftools()
    if lib is None:
        return None
    try:
        with open(path, "rb") as f:
            elf = lib[2](f)
            key = (elf["e_machine"], elf.elfclass)
    except (OSError, lib[0]):
        return None
    return _ABIS.get(key, f"{key[0]}/{key[1]}")


@_once_per_file
def has_debug_info(path):
    """Whether the ELF carries DWARF (.debug_info) at all: False for a stripped file."""
    lib = _elftools()
    if lib is None:
        return False
    try:
        with open(path, "rb") as f:
            return lib[2](f).get_section_by_name(".debug_info") is not None
    except (OSError, lib[0]):
        return False


def not_an_elf(path):
    """Why the file at path cannot be read as an ELF (one line), or None when it can."""
    lib = _elftools()
    if lib is None:
        return "pyelftools is not installed (Debian: python3-pyelftools)"
    ELFError, _, ELFFile = lib
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            for _ in elf.iter_sections():
                pass
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or exc}"
    except (ELFError, ValueError, KeyError, IndexError, AssertionError) as exc:
        return f"{path} is not an ELF file, or a truncated one ({exc})"
    except Exception as exc:  # pylint: disable=broad-except  (pyelftools raises what a hostile file makes it)
        return f"{path} is not an ELF file, or a truncated one ({type(exc).__name__}: {exc})"
    return None


# Build-attribute tags whose value is a NUL-terminated string (ARM IHI 0045 "Addenda to, and
# Errata in, the ABI for the Arm Architecture", 2.2.6: Tag_CPU_raw_name 4, Tag_CPU_name 5,
# Tag_conformance 67; any other tag above 32 carries a string when odd, a ULEB128 when even).
_STRING_TAGS = (4, 5, 67)
_TAG_COMPATIBILITY = 32  # ULEB128 flag, then a string
_TAG_FILE = 1            # the sub-subsection of attributes for the whole file


def _uleb(data, i):
    value = shift = 0
    while True:
        if i >= len(data):
            raise ValueError("truncated ULEB128")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, i


def _ntbs(data, i):
    end = data.index(b"\0", i)  # ValueError when unterminated
    return data[i:end].decode("ascii", "replace"), end + 1


def parse_build_attributes(data):
    """{tag: value} of the "aeabi" file attributes in a .ARM.attributes section's bytes (format
    'A', then subsections of uint32 length + vendor name + sub-subsections; ABI addenda 2.2).
    pyelftools 0.29 stops at tags it does not know (Tag_DSP_extension 46, Tag_MVE_arch 48), so
    the section is read here. Raises ValueError for bytes that are not that format."""
    if not data or data[0] != ord("A"):
        raise ValueError("not a build-attributes section (format byte is not 'A')")
    out = {}
    i = 1
    while i + 4 <= len(data):
        length = int.from_bytes(data[i:i + 4], "little")
        end = i + length
        if length < 5 or end > len(data):
            raise ValueError(f"attribute subsection at byte {i} has length {length}")
        vendor, j = _ntbs(data, i + 4)
        while vendor == "aeabi" and j + 5 <= end:
            tag, k = _uleb(data, j)
            size = int.from_bytes(data[k:k + 4], "little")
            sub_end = j + size
            if size < 5 or sub_end > end:
                raise ValueError(f"attribute sub-subsection at byte {j} has size {size}")
            k += 4
            while tag == _TAG_FILE and k < sub_end:
                attr, k = _uleb(data, k)
                if attr in _STRING_TAGS or (attr > _TAG_COMPATIBILITY and attr % 2):
                    out[attr], k = _ntbs(data, k)
                elif attr == _TAG_COMPATIBILITY:
                    out[attr], k = _uleb(data, k)
                    _, k = _ntbs(data, k)
                else:
                    out[attr], k = _uleb(data, k)
            j = sub_end
        i = end
    return out


@_once_per_file
def build_attributes(path):
    """({tag: value}, why-empty) of the ELF's .ARM.attributes (what the compiler was told:
    Tag_CPU_name 5, Tag_CPU_arch 6, Tag_DSP_extension 46, Tag_MVE_arch 48, ...); empty with the
    reason for a file without them, unreadable, or without pyelftools."""
    lib = _elftools()
    if lib is None:
        return {}, "pyelftools is not installed (Debian: python3-pyelftools)"
    ELFError, _, ELFFile = lib
    try:
        with open(path, "rb") as f:
            section = ELFFile(f).get_section_by_name(".ARM.attributes")
            if section is None:
                return {}, f"{path} has no .ARM.attributes (not an Arm ELF, or stripped of them)"
            return parse_build_attributes(section.data()), ""
    except (OSError, ELFError) as exc:
        return {}, f"cannot read the ELF {path}: {exc}"
    except ValueError as exc:
        return {}, f"{path}: its .ARM.attributes cannot be read: {exc}"


def function_names(path, names):
    """The names among `names` that the ELF's symbol table holds as functions (STT_FUNC)."""
    wanted = set(names)
    return sorted({n for n, _, _, t in _symbols_of(path) if t == "STT_FUNC" and n in wanted})
