"""What the firmware's ELF file says, read with pyelftools (no GDB): its RAM sections and its
symbols. The GDB plugin uses it for the loaded ELF; the standalone `arenascope live` for --elf."""


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
