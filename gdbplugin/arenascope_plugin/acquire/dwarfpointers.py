"""Where the firmware keeps typed pointers to a class, from its DWARF (pyelftools, no GDB): the
global variables of type `T *`, and `T *` members of global structs and classes (a few levels,
through arrays and one pointer to a struct), as an application holds an interpreter it made with
`new` or placed in external RAM (esp-tflite-micro: `tflite::MicroInterpreter* interpreter`).

A path is (label, address, chain): the pointer to T is the word at the end of the chain:
    p = address; for offset in chain: p = *p + offset; then *p is the T * (pointer-sized words).
label says it as C does: "g_interpreter", "g_app.interpreter", "g_models[1].interp",
"g_app_ptr->interpreter". Only variables with a static address (DW_OP_addr) at file or namespace
scope are read; function-static ones are not (a function-static object is found by a RAM scan).
"""
import os

from arenascope_plugin.acquire import dwarflayout

_CACHE = {}          # (path, mtime, size, class) -> paths
MAX_DEPTH = 5        # nested members and array levels followed
MAX_ELEMENTS = 16    # array elements followed
_RECORDS = ("DW_TAG_structure_type", "DW_TAG_class_type")
_THROUGH = ("DW_TAG_typedef", "DW_TAG_const_type", "DW_TAG_volatile_type")


def _name(die):
    attr = die.attributes.get("DW_AT_name")
    return attr.value.decode(errors="replace") if attr is not None else None


def _type(die):
    return die.get_DIE_from_attribute("DW_AT_type") if "DW_AT_type" in die.attributes else None


def _strip(die):
    for _ in range(16):
        if die is None or die.tag not in _THROUGH:
            return die
        die = _type(die)
    return None


def _qualified(die):
    parts = [_name(die)]
    parent = die.get_parent()
    while parent is not None and parent.tag in ("DW_TAG_namespace", *_RECORDS):
        parts.insert(0, _name(parent) or "(anonymous namespace)")
        parent = parent.get_parent()
    return "::".join(p for p in parts if p)


def _location(die):
    """The member's offset (dwarflayout.member_location), None for an expression it does not read."""
    try:
        return dwarflayout.member_location(die)
    except dwarflayout.LayoutError:
        return None


def _static_address(die, pointer):
    """The address of a variable located by DW_OP_addr alone, or None."""
    attr = die.attributes.get("DW_AT_location")
    if attr is None or attr.form not in ("DW_FORM_exprloc", "DW_FORM_block1", "DW_FORM_block"):
        return None
    ops = list(attr.value)
    if len(ops) != 1 + pointer or ops[0] != 0x03:
        return None
    return int.from_bytes(bytes(ops[1:]), "little")


class _Finder:
    def __init__(self, wanted, pointer):
        self.wanted, self.short, self.pointer = wanted, wanted.split("::")[-1], pointer
        self.memo = {}

    def is_wanted(self, die):
        return die is not None and die.tag in _RECORDS and _name(die) == self.short and _qualified(die) == self.wanted

    def inside(self, die, depth, derefs):
        """[(suffix, offset, chain)] of the pointers to the wanted class in an object of type die."""
        die = _strip(die)
        if die is None or depth < 0:
            return []
        key = (die.offset, depth, derefs)
        if key not in self.memo:
            self.memo[key] = []  # a type that holds itself (a list node) ends here
            self.memo[key] = self._inside(die, depth, derefs)
        return self.memo[key]

    def _inside(self, die, depth, derefs):
        if die.tag == "DW_TAG_pointer_type":
            target = _strip(_type(die))
            if self.is_wanted(target):
                return [("", 0, [])]
            if target is not None and target.tag in _RECORDS and derefs > 0:
                return [("->" + s.lstrip("."), 0, [o, *c]) for s, o, c in self.inside(target, depth - 1, derefs - 1)]
            return []
        if die.tag in _RECORDS and not self.is_wanted(die):
            out = []
            for child in die.iter_children():
                if child.tag != "DW_TAG_member" or "DW_AT_declaration" in child.attributes:
                    continue
                at = _location(child)
                if at is None:
                    continue
                out += [(f".{_name(child) or '?'}{s}", at + o, c) for s, o, c in
                        self.inside(_type(child), depth - 1, derefs)]
            return out
        if die.tag == "DW_TAG_array_type":
            element = _type(die)
            inner = self.inside(element, depth - 1, derefs)
            size = dwarflayout.byte_size(element, self.pointer)
            count = next((c.attributes["DW_AT_count"].value if "DW_AT_count" in c.attributes else
                          c.attributes["DW_AT_upper_bound"].value + 1 for c in die.iter_children()
                          if c.tag == "DW_TAG_subrange_type" and
                          ("DW_AT_count" in c.attributes or "DW_AT_upper_bound" in c.attributes)), 0)
            if not inner or not size or not isinstance(count, int):
                return []
            return [(f"[{i}]{s}", i * size + o, c) for i in range(min(count, MAX_ELEMENTS)) for s, o, c in inner]
        return []


def pointer_paths(path: str, class_name: str) -> list[tuple[str, int, list[int]]]:
    """[(label, address, chain)] of every typed pointer to `class_name` (C++-qualified) the ELF's
    global variables hold (see the module's docstring), in DWARF order; [] without DWARF or
    pyelftools. Read once per file version."""
    try:
        st = os.stat(path)
    except OSError:
        return []
    key = (path, st.st_mtime_ns, st.st_size, class_name)
    if key not in _CACHE:
        _CACHE[key] = _read(path, class_name)
    return list(_CACHE[key])


def _read(path, class_name):
    try:
        from elftools.common.exceptions import ELFError  # pylint: disable=import-outside-toplevel
        from elftools.elf.elffile import ELFFile  # pylint: disable=import-outside-toplevel
    except ImportError:
        return []
    out: list[tuple[str, int, list[int]]] = []
    seen: set = set()
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            if not elf.has_dwarf_info():
                return []
            pointer = elf.elfclass // 8
            finder = _Finder(class_name, pointer)
            for cu in elf.get_dwarf_info().iter_CUs():
                stack = [cu.get_top_DIE()]
                while stack:
                    for child in stack.pop().iter_children():
                        if child.tag == "DW_TAG_namespace":
                            stack.append(child)
                        elif child.tag == "DW_TAG_variable":
                            out += _variable(child, finder, pointer, seen)
    except (ELFError, OSError, KeyError, ValueError, AttributeError):
        return out
    return out


def _variable(die, finder, pointer, seen):
    address = _static_address(die, pointer)
    if address is None:
        return []
    spec = die.get_DIE_from_attribute("DW_AT_specification") if "DW_AT_specification" in die.attributes else \
        die.get_DIE_from_attribute("DW_AT_abstract_origin") if "DW_AT_abstract_origin" in die.attributes else None
    name = _name(die) or (spec is not None and _name(spec))
    kind = _type(die) if "DW_AT_type" in die.attributes else (spec is not None and _type(spec)) or None
    if not name or kind is None or address in seen:
        return []
    seen.add(address)
    return [(name + s, address + o, c) for s, o, c in finder.inside(kind, MAX_DEPTH, 1)]
