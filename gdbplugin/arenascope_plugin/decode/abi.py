"""The descriptor ABI 1.x as the plugin reads it (pure Python, no gdb).

Mirrors target_agent/include/arenascope/agent.h; docs/agent-abi.md is the prose, and
target_agent/abi/agent_abi_v1.json the golden fixture a test compares these tables with.
Each struct is a list of (field, type) in declaration order; offsets follow C's natural
alignment for the target's address size, computed by `layout()`.
"""
MAGIC = b"ARENASCP"
ABI_MAJOR = 1
ABI_MINOR = 1      # 1.1: seq_check after the arena entries (one-read seqlock)

NONE = 0xFFFFFFFF    # touched_lo/hi: nothing changed
ID_NONE = 0xFFFF     # region id: no tensor
USE_NONE = -1        # first/last use: not planned

KINDS = {1: "tensor", 2: "scratch", 3: "persistent", 4: "metadata"}
REGION_FLAGS = {0x01: "variable", 0x02: "input", 0x04: "output", 0x08: "offline", 0x10: "immutable"}
FLAG_MEASURED = 0x01
FLAG_STACK_LIMIT = 0x02  # MSPLIM armed at the stack's low bound (fault.h arenascope_fault_stack_limit)
ARENA_FLAG_TFLM = 0x01
ARENA_FLAG_PLANNER_IDS = 0x02  # region ids are TFLM planner buffer ids (the TFLM adapter)
# The bits each flags field defines; any other bit set is a corrupt descriptor (docs/agent-abi.md).
FLAGS_DEFINED = FLAG_MEASURED | FLAG_STACK_LIMIT
ARENA_FLAGS_DEFINED = ARENA_FLAG_TFLM | ARENA_FLAG_PLANNER_IDS
REGION_FLAGS_DEFINED = sum(REGION_FLAGS)
# Fill patterns the ABI forbids: zeroed or erased RAM holds them, so a band would look intact
# (or, read with such a pattern, damaged everywhere). agent_config.h refuses them at build time.
FORBIDDEN_PATTERNS = (0x00000000, 0xFFFFFFFF)

# The agent's function called at the start and at the end of each inference (agent.h
# arenascope_invoke_begin/end): invoke_phase is odd while one runs, so a stop there with an odd
# phase is the end of one (`arena soak`'s breakpoint).
INVOKE_MARK = "arenascope_invoke_mark"
INVOKE_MARK_END = "(arenascope_descriptor.invoke_phase & 1) == 1"

# Sizes of the scalar types; "addr" is the target's address size (4 or 8).
_SCALARS = {"u8": (1, "B"), "u16": (2, "H"), "u32": (4, "I"), "i16": (2, "h")}

TYPES = {
    "region": [("offset_bytes", "u32"), ("size_bytes", "u32"), ("id", "u16"), ("kind", "u8"), ("flags", "u8"),
               ("first_use", "i16"), ("last_use", "i16")],
    "band": [("low_addr", "addr"), ("high_addr", "addr"), ("touched_lo", "u32"), ("touched_hi", "u32")],
    "arena": [("base_addr", "addr"), ("regions_addr", "addr"), ("model_addr", "addr"), ("size_bytes", "u32"),
              ("head_bytes", "u32"), ("temp_bytes", "u32"), ("tail_offset", "u32"), ("model_size_bytes", "u32"),
              ("canary", "band"), ("alignment_bytes", "u16"), ("region_count", "u16"), ("region_capacity", "u16"),
              ("flags", "u8"), ("reserved", "u8")],
    "descriptor": [("magic", "char[8]"), ("abi_major", "u8"), ("abi_minor", "u8"), ("descriptor_size", "u16"),
                   ("addr_size", "u8"), ("arena_capacity", "u8"), ("arena_count", "u8"), ("arena_entry_size", "u8"),
                   ("region_entry_size", "u8"), ("flags", "u8"), ("seq", "u16"), ("layout_generation", "u16"),
                   ("reserved", "u16"), ("invoke_phase", "u32"), ("canary_pattern", "u32"),
                   ("stack_paint_pattern", "u32"), ("fault_record_addr", "addr"), ("stack", "band"),
                   ("guard", "band"), ("arena", "arena[]")],
    # ABI 1.1: after the arena entries, at end_offset(); offsets here are from there.
    "descriptor_end": [("seq_check", "u16"), ("reserved_end", "u16")],
}


def _size_align(ftype, addr_size):
    if ftype == "addr":
        return addr_size, addr_size
    if ftype == "char[8]":
        return 8, 1
    if ftype in ("band", "arena"):
        lay = layout(ftype, addr_size)
        return lay["_size"], lay["_align"]
    if ftype == "arena[]":
        lay = layout("arena", addr_size)
        return 0, lay["_align"]
    return _SCALARS[ftype][0], _SCALARS[ftype][0]


_LAYOUT_CACHE = {}


def layout(type_name, addr_size):
    """{field: offset, "_size": bytes (header only for the descriptor), "_align": bytes} for
    a struct at the given address size, by C's natural-alignment rules."""
    key = (type_name, addr_size)
    if key not in _LAYOUT_CACHE:
        offset, align_max, out = 0, 1, {}
        for field, ftype in TYPES[type_name]:
            size, align = _size_align(ftype, addr_size)
            offset = (offset + align - 1) // align * align
            out[field] = offset
            offset += size
            align_max = max(align_max, align)
        out["_size"] = (offset + align_max - 1) // align_max * align_max
        out["_align"] = align_max
        _LAYOUT_CACHE[key] = out
    return _LAYOUT_CACHE[key]


def scalar_format(ftype, addr_size):
    """struct format letter (little-endian, no prefix) of a scalar or address field."""
    if ftype == "addr":
        return "Q" if addr_size == 8 else "I"
    return _SCALARS[ftype][1]


def header_size(addr_size):
    """Bytes of the descriptor before the arena array."""
    return layout("descriptor", addr_size)["arena"]


def end_offset(addr_size, arena_capacity, arena_entry_size):
    """Offset of descriptor_end (ABI 1.1: seq_check), right after the arena entries."""
    return header_size(addr_size) + arena_capacity * arena_entry_size


def descriptor_size(addr_size, arena_capacity=1):
    """sizeof(arenascope_descriptor_t) of this ABI: header, entries, descriptor_end, padded."""
    align = layout("descriptor", addr_size)["_align"]
    end = end_offset(addr_size, arena_capacity, layout("arena", addr_size)["_size"]) + layout("descriptor_end",
                                                                                               addr_size)["_size"]
    return (end + align - 1) // align * align


def fnv1a(data: bytes) -> int:
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h
