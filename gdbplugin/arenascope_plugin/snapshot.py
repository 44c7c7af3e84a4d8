"""The snapshot: everything the plugin computed, as JSON (schema: docs/snapshot-schema.md).
The viewer draws it and recomputes nothing, so every figure it shows is here."""
import datetime

from . import abi, analysis
from .decode import Arena, Region

SCHEMA = "arenascope.snapshot"
VERSION = 1


def _band(b, measured):
    if not b.filled:
        return None
    touched = None
    if measured and b.touched:
        touched = {"offset": b.touched_lo, "size_bytes": b.touched_bytes}
    return {"low_addr": b.low_addr, "high_addr": b.high_addr, "size_bytes": b.size,
            "measured": measured, "intact_bytes": b.size - b.touched_bytes if measured else None, "touched": touched}


def _region(a, r):
    return {"index": r.index, "id": None if r.id == abi.ID_NONE else r.id, "kind": r.kind, "offset": r.offset,
            "address": a.base_addr + r.offset, "size_bytes": r.size,
            "first_use": r.first_use if r.planned else None, "last_use": r.last_use if r.planned else None,
            "flags": r.flag_names, "label": analysis.region_label(r), "name": r.name, "shape": r.shape,
            "dtype": r.dtype}


def build(desc, figs, stack, check_list, source):
    arenas = []
    for a in desc.arenas:
        f = figs[a.index]
        p = analysis.plan(a)
        arenas.append({
            "index": a.index, "base_addr": a.base_addr, "size_bytes": a.size, "head_bytes": a.head,
            "temp_bytes": a.temp, "tail_offset": a.tail, "tail_bytes": a.size - a.tail,
            "alignment_bytes": a.alignment, "tflm_figures": a.tflm_figures,
            "model_addr": a.model_addr or None, "model_size_bytes": a.model_size or None,
            "used_bytes": f.used, "peak_bytes": f.peak, "headroom_bytes": f.headroom,
            "headroom_pct": round(f.headroom_pct, 2), "minimum_arena_bytes": f.minimum_arena,
            "headroom_is_upper_estimate": f.minimum_arena is None,
            "free_band": dict(_band(a.canary, desc.measured) or {}, offset=a.canary.low_addr - a.base_addr)
            if a.canary.filled else None,
            "damage": {"offset": f.damage[0], "size_bytes": f.damage[1] - f.damage[0]} if f.damage else None,
            "region_capacity": a.region_capacity,
            "regions": [_region(a, r) for r in a.regions],
            "plan": {"scopes": p.scopes, "live_bytes": p.live_bytes, "live_regions": p.live_regions,
                     "lower_bound_bytes": p.lower_bound, "lower_bound_scope": p.lower_bound_scope},
        })
    return {
        "schema": SCHEMA, "version": VERSION,
        "source": dict(source, descriptor_address=desc.address, abi=f"{desc.abi_major}.{desc.abi_minor}",
                       addr_size=desc.addr_size,
                       time=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")),
        "state": {"invokes": desc.invokes, "in_invoke": desc.in_invoke, "measured": desc.measured, "measured_by": desc.measured_by,
                  "seq": desc.seq, "layout_generation": desc.layout_generation},
        "arenas": arenas,
        "stack": {"low_addr": stack.low, "high_addr": stack.high, "size_bytes": stack.size, "sp": stack.sp,
                  # through the guard band: the lowest address known reached, so peak = high - hwm holds
                  "hwm_addr": stack.guard_low if stack.peak_is_lower_bound else stack.hwm,
                  "peak_bytes": stack.peak, "peak_is_lower_bound": stack.peak_is_lower_bound, "source": stack.source,
                  "overflowed": stack.overflowed, "arena_end_addr": stack.arena_end, "room_bytes": stack.room,
                  "required_room_bytes": stack.required_room, "rule_factor": analysis.STACK_RULE_FACTOR},
        "guard": _band(desc.guard, desc.measured),
        "checks": [{"rule": c.rule, "verdict": c.verdict, "reason": c.reason} for c in check_list],
        "verdict": analysis.worst(check_list),
    }


class SnapshotError(Exception):
    """A snapshot file that is not one: its message says which field is wrong."""


def arenas_from_snapshot(doc):
    """The arenas of a snapshot (the plugin's, or arenascope-plan --snapshot's) as decode.Arena,
    so that `arena plan --snapshot FILE` draws their plans with the same chart as a target's.
    Reads only what the chart needs; SnapshotError names the first field that is wrong."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise SnapshotError(f"not an arenascope snapshot (no \"schema\": \"{SCHEMA}\")")
    if doc.get("version") != VERSION:
        raise SnapshotError(f"snapshot version {doc.get('version')!r}: this plugin reads version {VERSION}")
    flag_bits = {name: bit for bit, name in abi.REGION_FLAGS.items()}
    out = []
    try:
        for ai, a in enumerate(doc["arenas"]):
            regions = []
            for ri, r in enumerate(a["regions"]):
                if r["index"] != ri:
                    raise SnapshotError(f"arenas[{ai}].regions[{ri}].index is {r['index']}: regions must be in index order")
                regions.append(Region(
                    index=ri, offset=int(r["offset"]), size=int(r["size_bytes"]),
                    id=abi.ID_NONE if r["id"] is None else int(r["id"]), kind=str(r["kind"]),
                    flags=sum(flag_bits.get(f, 0) for f in r["flags"]),
                    first_use=abi.USE_NONE if r["first_use"] is None else int(r["first_use"]),
                    last_use=abi.USE_NONE if r["last_use"] is None else int(r["last_use"]),
                    name=r.get("name") or r.get("label"), shape=r.get("shape"), dtype=r.get("dtype")))
            out.append(Arena(index=int(a["index"]), base_addr=int(a["base_addr"]), regions_addr=0, model_addr=0,
                             size=int(a["size_bytes"]), head=int(a["head_bytes"]), temp=int(a["temp_bytes"]),
                             tail=int(a["tail_offset"]), model_size=0, canary=None,
                             alignment=int(a["alignment_bytes"]), region_count=len(regions),
                             region_capacity=len(regions), flags=0, regions=regions))
    except (KeyError, TypeError, ValueError) as e:
        raise SnapshotError(f"a field is missing or has the wrong type ({type(e).__name__}: {e}); "
                            "see docs/snapshot-schema.md") from None
    return out
