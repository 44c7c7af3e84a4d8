"""TFLM's Layout (tflm.Layout: member offsets and type sizes) from the ELF's DWARF with
pyelftools, for the standalone `arenascope live` (no GDB). The GDB plugin builds the same Layout
from gdb.Type (agentless.layout); both look up the same names (tflm.MEMBERS, tflm.SIZES), and
tests/integration/test_openocd_live.py checks they agree on a real TFLM ELF when one is named.

Only what the walk needs is kept: named struct/class definitions (not declarations), their
byte_size, their members' data_member_location and their base classes (DW_TAG_inheritance),
by C++-qualified name (namespaces joined with ::).
"""
from arenascope_plugin.decode import tflm

_RECORDS = ("DW_TAG_structure_type", "DW_TAG_class_type", "DW_TAG_union_type")


class LayoutError(Exception):
    """The DWARF lacks a type or member the walk needs; the message names it."""


def _location(die):
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
            elif tag == "DW_TAG_typedef" and name and not scope:
                target = child.get_DIE_from_attribute("DW_AT_type") if "DW_AT_type" in child.attributes else None
                if target is not None and target.tag in _RECORDS and "DW_AT_declaration" not in target.attributes:
                    self.defs.setdefault(name, target)

    def size(self, name):
        die = self.defs.get(name)
        if die is None or "DW_AT_byte_size" not in die.attributes:
            return None
        return die.attributes["DW_AT_byte_size"].value

    def members(self, die, wanted, prefix=0, out=None):
        out = {} if out is None else out
        for child in die.iter_children():
            if child.tag == "DW_TAG_inheritance":
                base = child.get_DIE_from_attribute("DW_AT_type")
                while base.tag == "DW_TAG_typedef":
                    base = base.get_DIE_from_attribute("DW_AT_type")
                self.members(base, wanted, prefix + _location(child), out)
            elif child.tag == "DW_TAG_member":
                n = child.attributes.get("DW_AT_name")
                n = n.value.decode(errors="replace") if n is not None else None
                if n in wanted and n not in out:
                    out[n] = prefix + _location(child)
        return out

    def base_offset(self, name, base_name):
        die = self.defs.get(name)
        for child in die.iter_children() if die is not None else []:
            if child.tag == "DW_TAG_inheritance":
                base = child.get_DIE_from_attribute("DW_AT_type")
                n = base.attributes.get("DW_AT_name")
                if n is not None and n.value.decode(errors="replace") == base_name.split("::")[-1]:
                    return _location(child)
        return 0


def demangle_vtable(symbol):
    """'tflite::GreedyMemoryPlanner' from '_ZTVN6tflite19GreedyMemoryPlannerE' (Itanium ABI
    nested names only, the form a vtable of a namespaced class has); None otherwise."""
    if not symbol.startswith("_ZTV"):
        return None
    s, parts = symbol[4:], []
    if s.startswith("N") and s.endswith("E"):
        s = s[1:-1]
    while s:
        digits = len(s) - len(s.lstrip("0123456789"))
        if not digits:
            return None
        n = int(s[:digits])
        parts.append(s[digits:digits + n])
        s = s[digits + n:]
    return "::".join(parts) or None


def layout(path):
    """(tflm.Layout, {qualified type name: size} of TFLM's and arenascope's classes) of the TFLM
    linked into the ELF at path. LayoutError names what is missing
    (no debug information, or another TFLM version than tflm.CHECKED_AGAINST)."""
    try:
        from elftools.elf.elffile import ELFFile  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise LayoutError("pyelftools is not installed (Debian: python3-pyelftools)") from None
    with open(path, "rb") as f:
        elf = ELFFile(f)
        if not elf.has_dwarf_info():
            raise LayoutError(f"{path} has no debug information: build TFLM with -g")
        types = _Types(elf.get_dwarf_info())
        pointer = elf.elfclass // 8
        offsets = {}
        for type_name, members in tflm.MEMBERS.items():
            die = types.defs.get(type_name)
            if die is None:
                raise LayoutError(f"{path}'s DWARF has no definition of {type_name}: build TFLM with -g")
            found = types.members(die, set(members))
            missing = [m for m in members if m not in found]
            if missing:
                raise LayoutError(f"{type_name} has no member {', '.join(missing)} in this firmware: another TFLM "
                                  f"version than the one checked ({tflm.CHECKED_AGAINST})")
            offsets[type_name] = found
        sizes = {}
        for name in tflm.SIZES:
            size = types.size(name)
            if size is None:
                raise LayoutError(f"{path}'s DWARF has no size for {name}: build TFLM with -g")
            sizes[name] = size
        base = types.base_offset("tflite::SingleArenaBufferAllocator", "tflite::INonPersistentBufferAllocator")
        lay = tflm.Layout(pointer=pointer, offsets=offsets, sizes=sizes, saba_nonpersistent_base=base)
        return lay, {n: types.size(n) for n in types.defs if n.startswith(("tflite::", "arenascope::"))}
