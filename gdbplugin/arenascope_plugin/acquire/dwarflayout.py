"""Type layouts (member offsets and sizes, type sizes, base-class offsets) from the ELF's DWARF
with pyelftools, for ElfSymbols (no GDB). GdbSymbols answers the same questions from gdb.Type;
decode/tflm.py builds TFLM's Layout from either, and the parity test
(tests/integration/test_parity.py) and test_agentless_tflm.py check that they agree.

Only what the walk needs is kept: named struct/class definitions (not declarations), their
byte_size, their members' data_member_location and their base classes (DW_TAG_inheritance),
by C++-qualified name (namespaces joined with ::).
"""
from arenascope_plugin.errors import ArenascopeError

_RECORDS = ("DW_TAG_structure_type", "DW_TAG_class_type", "DW_TAG_union_type")


class LayoutError(ArenascopeError):
    """The DWARF lacks a type or member the walk needs; the message names it."""


def member_location(die):
    """A member's (or a base class's) byte offset: DW_AT_data_member_location as a constant or a
    DWARF 2/3 DW_OP_plus_uconst expression; 0 when absent; LayoutError for another expression."""
    attr = die.attributes.get("DW_AT_data_member_location")
    if attr is None:
        return 0  # a union member, or the first
    if isinstance(attr.value, int):
        return attr.value
    # A DWARF 2/3 location expression: DW_OP_plus_uconst N (0x23, then ULEB128).
    ops = list(attr.value)
    if ops and ops[0] == 0x23:
        value, shift = 0, 0
        for b in ops[1:]:
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        return value
    raise LayoutError(f"an unsupported member location {attr.value!r}")


class _Types:
    def __init__(self, dwarf):
        self.defs = {}  # qualified name -> DIE (the first complete definition)
        for cu in dwarf.iter_CUs():
            self._scan(cu.get_top_DIE(), [])

    def _scan(self, die, scope):
        for child in die.iter_children():
            tag = child.tag
            name = child.attributes.get("DW_AT_name")
            name = name.value.decode(errors="replace") if name is not None else None
            if tag == "DW_TAG_namespace":
                self._scan(child, scope + [name or "(anonymous namespace)"])
            elif tag in _RECORDS and name and "DW_AT_declaration" not in child.attributes:
                qualified = "::".join(scope + [name])
                self.defs.setdefault(qualified, child)
                self._scan(child, scope + [name])  # nested types
            elif tag == "DW_TAG_typedef" and name:
                # `typedef struct {...} Name;`, at file scope (TfLiteEvalTensor) or in a namespace
                # (TFLM before 2022-10: tflite::SubgraphAllocations, tflite::NodeAndRegistration)
                target = child.get_DIE_from_attribute("DW_AT_type") if "DW_AT_type" in child.attributes else None
                if target is not None and target.tag in _RECORDS and "DW_AT_declaration" not in target.attributes:
                    self.defs.setdefault("::".join(scope + [name]), target)

    def size(self, name):
        die = self.defs.get(name)
        if die is None or "DW_AT_byte_size" not in die.attributes:
            return None
        return die.attributes["DW_AT_byte_size"].value

    def base_offset(self, name, base_name):
        die = self.defs.get(name)
        for child in die.iter_children() if die is not None else []:
            if child.tag == "DW_TAG_inheritance":
                base = child.get_DIE_from_attribute("DW_AT_type")
                n = base.attributes.get("DW_AT_name")
                if n is not None and n.value.decode(errors="replace") == base_name.split("::")[-1]:
                    return member_location(child)
        return 0


def byte_size(die, pointer):
    """sizeof the type a DIE names, through typedefs and qualifiers; None when unknown."""
    for _ in range(16):
        if die is None:
            return None
        if "DW_AT_byte_size" in die.attributes:
            return die.attributes["DW_AT_byte_size"].value
        if die.tag in ("DW_TAG_pointer_type", "DW_TAG_reference_type", "DW_TAG_rvalue_reference_type"):
            return pointer
        if "DW_AT_type" not in die.attributes:
            return None
        die = die.get_DIE_from_attribute("DW_AT_type")
    return None


class DwarfTypes:
    """The ELF's type definitions by C++-qualified name (acquire.symbols.Symbols' type queries).
    LayoutError when the file has no debug information; OSError when it cannot be read."""

    def __init__(self, path):
        try:
            from elftools.elf.elffile import ELFFile  # pylint: disable=import-outside-toplevel
        except ImportError:
            raise LayoutError("pyelftools is not installed (Debian: python3-pyelftools)") from None
        self._file = open(path, "rb")  # pylint: disable=consider-using-with  (DIEs are read lazily from it)
        elf = ELFFile(self._file)
        if not elf.has_dwarf_info():
            self._file.close()
            raise LayoutError(f"{path} has no debug information: build TFLM and the application with -g")
        self.pointer = elf.elfclass // 8
        self._types = _Types(elf.get_dwarf_info())
        self._members = {}
        self._sizes = {n: self._types.size(n) for n in self._types.defs}
        self._bases = {}
        self.path = path

    def size(self, name):
        return self._sizes.get(name)

    def members(self, name, wanted):
        """{member: (offset, size)} of the wanted members of `name` (base classes included), or
        None when the type is not defined."""
        key = (name, tuple(sorted(wanted)))
        if key not in self._members:
            self._members[key] = self._members_of(name, set(wanted))
        return self._members[key]

    def base_offset(self, name, base_name):
        key = (name, base_name)
        if key not in self._bases:
            self._bases[key] = self._types.base_offset(name, base_name)
        return self._bases[key]

    def _members_of(self, name, wanted):
        die = self._types.defs.get(name)
        if die is None:
            return None
        offsets: dict[str, int] = {}
        sizes: dict[str, int] = {}
        self._walk(die, wanted, 0, offsets, sizes)
        return {m: (offsets[m], sizes.get(m)) for m in offsets}

    def _walk(self, die, wanted, prefix, offsets, sizes):
        for child in die.iter_children():
            if child.tag == "DW_TAG_inheritance":
                base = child.get_DIE_from_attribute("DW_AT_type")
                while base.tag == "DW_TAG_typedef":
                    base = base.get_DIE_from_attribute("DW_AT_type")
                self._walk(base, wanted, prefix + member_location(child), offsets, sizes)
            elif child.tag == "DW_TAG_member":
                n = child.attributes.get("DW_AT_name")
                n = n.value.decode(errors="replace") if n is not None else None
                if n in wanted and n not in offsets:
                    offsets[n] = prefix + member_location(child)
                    t = child.get_DIE_from_attribute("DW_AT_type") if "DW_AT_type" in child.attributes else None
                    sizes[n] = byte_size(t, self.pointer)
