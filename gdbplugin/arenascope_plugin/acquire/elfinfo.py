"""What the firmware's ELF file says, read with pyelftools (no GDB): its RAM sections and its
symbols. The GDB plugin uses it for the loaded ELF; the standalone `arenascope live` for --elf."""
import os

# Linker-script names of the stack's bounds, (low, high), most common first.
STACK_SYMBOLS = [("__StackLimit", "__StackTop"), ("_sstack", "_estack"), ("__stack_start__", "__stack_end__"),
                 ("_stack_start", "_stack_end")]


_CACHE = {}  # (function, path, mtime, size) -> what it read: each ELF file is parsed once a version


def _fresh(value):
    """A copy of a cached list, dict or (list, text) pair: callers may extend what they get."""
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return {k: list(v) for k, v in value.items()}
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
    out = {"code": [], "flash": [], "ram": []}
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


def _itanium_vtable(qualified):
    """The mangled name of `vtable for NS::Class` (Itanium C++ ABI 5.1: _ZTV + nested name)."""
    parts = qualified.split("::")
    nested = "".join(f"{len(p)}{p}" for p in parts)
    return f"_ZTVN{nested}E" if len(parts) > 1 else f"_ZTV{nested}"


def vtables(path, classes):
    """{class: (vtable address, size)} of the classes' vtables the ELF's symbol table holds."""
    wanted = {_itanium_vtable(c): c for c in classes}
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
