"""What the firmware's ELF file says, read with pyelftools (no GDB): its RAM sections and its
symbols. The GDB plugin uses it for the loaded ELF; the standalone `arenascope live` for --elf."""


# Linker-script names of the stack's bounds, (low, high), most common first.
STACK_SYMBOLS = [("__StackLimit", "__StackTop"), ("_sstack", "_estack"), ("__stack_start__", "__stack_end__"),
                 ("_stack_start", "_stack_end")]


def _elftools():
    try:
        from elftools.common.exceptions import ELFError  # pylint: disable=import-outside-toplevel
        from elftools.elf.constants import SH_FLAGS  # pylint: disable=import-outside-toplevel
        from elftools.elf.elffile import ELFFile  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    return ELFError, SH_FLAGS, ELFFile


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


def object_at(path, address):
    """(name, start, size) of the ELF's data object (STT_OBJECT of known size) holding address,
    or None."""
    lib = _elftools()
    if lib is None:
        return None
    with open(path, "rb") as f:
        symtab = lib[2](f).get_section_by_name(".symtab")
        for s in symtab.iter_symbols() if symtab else []:
            if s["st_info"]["type"] == "STT_OBJECT" and s["st_size"] and \
                    s["st_value"] <= address < s["st_value"] + s["st_size"]:
                return s.name, s["st_value"], s["st_size"]
    return None


def object_bytes(path, name):
    """(size, bytes) of the data object `name`: its bytes as the ELF file holds them (from an
    allocated PROGBITS section: the image, not debug data), or None when the file has no bytes
    for it (e.g. in .bss). ValueError when there is no such object of known size."""
    lib = _elftools()
    if lib is None:
        raise ValueError("pyelftools is not installed (Debian: python3-pyelftools)")
    with open(path, "rb") as f:
        elf = lib[2](f)
        symtab = elf.get_section_by_name(".symtab")
        sym = next((x for x in (symtab.iter_symbols() if symtab else []) if x.name == name and x["st_size"]), None)
        if sym is None or sym["st_info"]["type"] != "STT_OBJECT":
            raise ValueError(f"'{name}' is not a data object of known size")
        start, size = sym["st_value"], sym["st_size"]
        for sec in elf.iter_sections():
            lo = sec["sh_addr"]
            if sec["sh_type"] == "SHT_PROGBITS" and sec["sh_flags"] & 0x2 and lo <= start and \
                    start + size <= lo + sec["sh_size"]:  # SHF_ALLOC
                return size, sec.data()[start - lo:start - lo + size]
    return size, None


def objects_of_size(path, size):
    """[(name, address)] of the ELF's data objects exactly `size` bytes long."""
    lib = _elftools()
    if lib is None:
        return []
    with open(path, "rb") as f:
        symtab = lib[2](f).get_section_by_name(".symtab")
        return [(s.name, s["st_value"]) for s in (symtab.iter_symbols() if symtab else [])
                if s["st_info"]["type"] == "STT_OBJECT" and s["st_size"] == size]


def symbol_name_at(path, address):
    """The name of the symbol whose [value, value + size) holds address (any type), or None."""
    lib = _elftools()
    if lib is None:
        return None
    with open(path, "rb") as f:
        symtab = lib[2](f).get_section_by_name(".symtab")
        for s in symtab.iter_symbols() if symtab else []:
            if s["st_size"] and s["st_value"] <= address < s["st_value"] + s["st_size"]:
                return s.name
    return None
