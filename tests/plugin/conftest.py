"""Plugin unit tests run without GDB: the plugin's pure layers (decode, session, locate,
analysis, render, snapshot) on byte images built here from the golden ABI fixture."""
import json
import os
import pathlib
import struct
import sys

# Every snapshot these tests write is checked against docs/snapshot-schema.json first
# (present/snapshot.write_snapshot_file).
os.environ.setdefault("ARENASCOPE_VALIDATE_SNAPSHOTS", "1")

# The property tests (python3-hypothesis) run a fixed seed: CI is deterministic; open-ended runs are
# by hand (HYPOTHESIS_PROFILE=explore), and what they find becomes an explicit example.
try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:  # the tests that need it fail on their own import, saying so
    _hypothesis_settings = None
if _hypothesis_settings is not None:
    _hypothesis_settings.register_profile("ci", derandomize=True, database=None)
    _hypothesis_settings.register_profile("explore", database=None)
    _hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "gdbplugin"))

ABI = json.loads((ROOT / "target_agent" / "abi" / "agent_abi_v1.json").read_text())
SHARED = ROOT.parent / "shared"

_FMT = {"u8": "B", "u16": "H", "u32": "I", "i16": "h"}


def encode(type_name, values, addr_size, buf=None, offset=0):
    """Test-side encoder: writes `values` (a dict, nested for bands/arenas) at the fixture's
    offsets. Independent of the plugin's own layout code."""
    layout = ABI["layouts"][str(addr_size)]
    size = layout[type_name].get("_size", layout[type_name].get("_size_one_arena"))
    buf = buf if buf is not None else bytearray(size)
    for field, ftype in ABI["types"][type_name]:
        at = offset + layout[type_name][field]
        v = values.get(field)
        if v is None:
            continue
        if ftype == "addr":
            struct.pack_into("<Q" if addr_size == 8 else "<I", buf, at, v)
        elif ftype == "char[8]":
            buf[at:at + 8] = v
        elif ftype == "band":
            encode("band", v, addr_size, buf, at)
        elif ftype == "arena[]":
            for i, arena in enumerate(v):
                encode("arena", arena, addr_size, buf, at + i * layout["arena"]["_size"])
        else:
            struct.pack_into("<" + _FMT[ftype], buf, at, v)
    return buf


def region_bytes(regions):
    return b"".join(struct.pack("<IIHBBhh", *r) for r in regions)


NONE = 0xFFFFFFFF
DESC_ADDR = 0x20000000
TABLE_ADDR = 0x20000100
ARENA_ADDR = 0x20001000


def demo_like(addr_size=4, regions=None, minor=1, **over):
    """A valid descriptor image and its region table: one 4 KiB arena, head 256, temp 288,
    tail 3072, guard and stack right above the arena. minor 1 (ABI 1.1): seq_check after the
    arena entry equals seq (`seq_check=` sets it); minor 0: the 1.0 block, without it."""
    regions = regions if regions is not None else [
        (0, 128, 1, 1, 2, 0, 1),      # tensor 1, model input, scopes 0..1
        (128, 128, 2, 1, 0, 1, 2),    # tensor 2
        (0, 64, 3, 1, 4, 2, 2),       # tensor 3, model output
        (64, 64, 0, 2, 0, 2, 2),      # scratch 0 of operator 1
        (3072, 1024, 0xFFFF, 4, 0, -1, -1),  # metadata in the tail
    ]
    arena = {"base_addr": ARENA_ADDR, "regions_addr": TABLE_ADDR, "model_addr": 0, "size_bytes": 4096,
             "head_bytes": 256, "temp_bytes": 288, "tail_offset": 3072, "model_size_bytes": 0,
             "canary": {"low_addr": ARENA_ADDR + 288, "high_addr": ARENA_ADDR + 3072, "touched_lo": NONE,
                        "touched_hi": NONE},
             "alignment_bytes": 16, "region_count": len(regions), "region_capacity": len(regions) + 3,
             "flags": 0}
    arena.update(over.pop("arena", {}))
    lay = ABI["layouts"][str(addr_size)]["descriptor"]
    size = lay["_size_one_arena"] if minor >= 1 else lay["_end_one_arena"]
    seq_check = over.pop("seq_check", None)
    header = {"magic": b"ARENASCP", "abi_major": 1, "abi_minor": minor, "descriptor_size": size,
              "addr_size": addr_size,
              "arena_capacity": 1, "arena_count": 1,
              "arena_entry_size": ABI["layouts"][str(addr_size)]["arena"]["_size"],
              "region_entry_size": 16, "flags": 1, "seq": 10, "layout_generation": 5, "invoke_phase": 6,
              "canary_pattern": 0xAAAAAAAA, "stack_paint_pattern": 0xCCCCCCCC, "fault_record_addr": 0,
              "stack": {"low_addr": ARENA_ADDR + 4096 + 64, "high_addr": ARENA_ADDR + 4096 + 64 + 1024,
                        "touched_lo": 1024 - 200, "touched_hi": 1024},
              "guard": {"low_addr": ARENA_ADDR + 4096, "high_addr": ARENA_ADDR + 4096 + 64, "touched_lo": NONE,
                        "touched_hi": NONE},
              "arena": [arena]}
    header.update(over)
    image = encode("descriptor", header, addr_size)
    if minor >= 1:
        encode("descriptor_end", {"seq_check": header["seq"] if seq_check is None else seq_check}, addr_size,
               image, lay["_end_one_arena"])
    else:
        del image[size:]
    return bytes(image), region_bytes(regions)
