"""The snapshot: everything the plugin computed, as JSON (schema: docs/snapshot-schema.md).
The viewer draws it and recomputes nothing, so every figure it shows is here."""
import datetime
import itertools
import json
import os
import pathlib
from typing import Any

from arenascope_plugin import version
from arenascope_plugin.analyse import diff, figures
from arenascope_plugin.decode import abi
from arenascope_plugin.decode.descriptor import Arena, Descriptor, Region
from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.present import files, jsontext

SCHEMA = "arenascope.snapshot"
VERSION = 3
# The versions this plugin reads: 2 differs only in its fault (Cortex-M's registers as fields).
READS = (2, 3)


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
            "flags": r.flag_names, "label": figures.region_label(r), "name": r.name, "shape": r.shape,
            "dtype": r.dtype}


@figures.per_table(also=lambda a: (a.base_addr, tuple([(r.name, id(r.shape), r.dtype) for r in a.regions])))
def _regions_json(a) -> list[dict]:
    """The snapshot's region objects of arena `a`, built once for each table and naming
    (figures.per_table): a live refresh of an unchanged table reuses them."""
    return [_region(a, r) for r in a.regions]


def regions_json(a) -> list[dict]:
    """The snapshot's region objects of arena `a` (a new list; the objects are shared)."""
    return list(_regions_json(a))


def checks_json(check_list: list[figures.Check]) -> list[dict]:
    """The snapshot's `checks`: {rule, verdict, reason} a check (`arena check --json`, --junit)."""
    return [{"rule": c.rule, "verdict": c.verdict, "reason": c.reason} for c in check_list]


def stack_json(stack: figures.StackFigures) -> dict:
    """The snapshot's `stack` object (docs/snapshot-schema.md); `arena stack --json` prints it too."""
    return {"low_addr": stack.low, "high_addr": stack.high, "size_bytes": stack.size, "sp": stack.sp,
            # through the guard band: the lowest address known reached, so peak = high - hwm holds
            "hwm_addr": stack.lowest if stack.peak_is_lower_bound else stack.hwm if stack.peak is not None else None,
            "peak_bytes": stack.peak, "peak_is_lower_bound": stack.peak_is_lower_bound, "source": stack.source,
            "overflowed": stack.overflowed, "arena_end_addr": stack.arena_end, "room_bytes": stack.room,
            "required_room_bytes": stack.required_room, "rule_factor": figures.STACK_RULE_FACTOR}


PREDICTED_PATH_MAX = 64  # functions of the predicted path a snapshot carries (the viewer's limit too)
NAME_MAX = 4096          # characters of one function's name there (the schema's maxLength)


def predicted_json(depth) -> dict | None:
    """The snapshot's stack.predicted: the worst case `arena budget` works out from the ELF
    (analyse/stackdepth.StackDepth), or None when there is none."""
    if depth is None or depth.problem or depth.thread is None:
        return None
    return {"worst_bytes": depth.main_stack_bytes, "is_floor": not depth.exact,
            "thread_bytes": depth.thread.bytes,
            "path": [s.name[:NAME_MAX] for s in depth.thread.path][:PREDICTED_PATH_MAX]}


RAM_MAP_MAX = 64  # areas of the RAM map a snapshot carries (the viewer's limit too)


def ram_map_json(budget) -> list | None:
    """The snapshot's ram_map: every RAM area the ELF lays out (analyse/rambudget.Budget.areas:
    sections, the heap, the arena, the stack), lowest first, with the stack rule's verdict on the
    predicted worst case; None without one."""
    if budget is None or not budget.areas:
        return None
    return [{"low_addr": a.lo, "high_addr": a.hi, "what": a.what[:NAME_MAX], "kind": a.kind}
            for a in budget.areas[:RAM_MAP_MAX]]


def build(desc: Descriptor, figs: dict[int, figures.ArenaFigures], stack: figures.StackFigures,
          check_list: list[figures.Check], source: dict) -> dict:
    arenas = []
    for a in desc.arenas:
        f = figs[a.index]
        p = figures.plan(a)
        arenas.append({
            "index": a.index, "base_addr": a.base_addr, "size_bytes": a.size, "head_bytes": a.head,
            "temp_bytes": a.temp, "tail_offset": a.tail, "tail_bytes": a.size - a.tail,
            "alignment_bytes": a.alignment, "tflm_figures": a.tflm_figures,
            "model_addr": a.model_addr or None, "model_size_bytes": a.model_size or None,
            "used_bytes": f.used, "peak_bytes": f.peak, "headroom_bytes": f.headroom,
            "headroom_pct": figures.headroom_pct_2dp(f.headroom, f.peak), "minimum_arena_bytes": f.minimum_arena,
            "headroom_is_upper_estimate": f.minimum_arena is None,
            "free_band": dict(_band(a.canary, desc.measured) or {}, offset=a.canary.low_addr - a.base_addr)
            if a.canary.filled else None,
            "damage": {"offset": f.damage[0], "size_bytes": f.damage[1] - f.damage[0]} if f.damage else None,
            "region_capacity": a.region_capacity,
            "regions": regions_json(a),
            "plan": {"scopes": p.scopes, "live_bytes": p.live_bytes, "live_regions": p.live_regions,
                     "lower_bound_bytes": p.lower_bound, "lower_bound_scope": p.lower_bound_scope},
        })
        if a.memory:  # two-arena mode only: an arena holding head and tail has no "memory"
            arenas[-1]["memory"] = a.memory
        if a.moved_from is not None:  # a per-inference arena, allocated again elsewhere
            arenas[-1]["moved_from"] = a.moved_from
    return {
        "schema": SCHEMA, "version": VERSION,
        "source": dict(source, descriptor_address=desc.address, abi=f"{desc.abi_major}.{desc.abi_minor}",
                       addr_size=desc.addr_size, arenascope_version=version.VERSION, time=now_text()),
        "state": state_json(desc),
        "arenas": arenas,
        "stack": stack_json(stack),
        "guard": _band(desc.guard, desc.measured),
        "checks": checks_json(check_list),
        "verdict": figures.worst(check_list),
    }


def now_text() -> str:
    """The snapshot's source.time: now, UTC, ISO 8601 to the second."""
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def state_json(desc: Descriptor) -> dict:
    """The snapshot's `state`: the descriptor's counters and flags (docs/snapshot-schema.md)."""
    return {"invokes": desc.invokes, "in_invoke": desc.in_invoke, "measured": desc.measured,
            "measured_by": desc.measured_by, "seq": desc.seq, "layout_generation": desc.layout_generation}


def tasks_json(kernel, task_stacks) -> dict:
    """The snapshot's `tasks` (docs/snapshot-schema.md, "tasks"): the RTOS's tasks and their stacks'
    figures (analyse/tasks.py's TaskStack)."""
    rows = []
    for ts in task_stacks:
        t, s = ts.task, ts.stack
        rows.append({"name": t.name, "tcb_addr": t.tcb, "state": t.state, "priority": t.priority,
                     "low_addr": t.stack_low, "high_addr": t.stack_high, "high_source": t.high_source,
                     "sp": ts.sp, "sp_live": ts.sp_live, "hwm_addr": ts.hwm, "never_used_bytes": ts.never_used,
                     "peak_bytes": s.peak if s is not None and ts.painted else None,
                     "peak_is_lower_bound": bool(s is not None and s.peak_is_lower_bound),
                     "overflowed": ts.overflowed, "below": ts.below, "arena_index": ts.arena_index,
                     "room_bytes": s.room if s is not None else None,
                     "required_room_bytes": s.required_room if s is not None and ts.painted else None,
                     "problems": list(t.problems)})
    return {"kernel": kernel.name, "current_tcb": kernel.current, "problems": list(kernel.problems), "list": rows}


class SnapshotError(ArenascopeError):
    """A snapshot file that is not one: its message says which field is wrong."""


# The snapshot's limits: common/include/arenascope/snapshot_limits.h kMaxSnapshotBytes,
# kMaxRegions (an arena's) and kMaxScopes, the viewer's and the planner's
# (tests/plugin/test_snapshot_limits.py). A use up to MAX_SCOPE: the planner's snapshot of a model
# of 100,000 operators gives 100,000 (the agent's uses are 16-bit, TFLM's plan's int).
MAX_SNAPSHOT_BYTES = 64 << 20
MAX_REGIONS = 200000
MAX_SCOPE = 200000


def _reject_constant(name):
    raise ValueError(f"{name} is not a number JSON allows")


def load_snapshot_file(path: str | os.PathLike[str]) -> Any:
    """Reads a snapshot file: SnapshotError for anything that is not a snapshot's JSON, or not a
    regular file (a FIFO or a device would block the reader, and GDB with it)."""
    if not os.path.isfile(path):
        raise SnapshotError(f"{path} is not a regular file" if os.path.exists(path) else
                            f"cannot read the snapshot {path}: No such file or directory")
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SNAPSHOT_BYTES + 1)
    except OSError as e:
        raise SnapshotError(f"cannot read the snapshot {path}: {e.strerror}") from None
    if len(data) > MAX_SNAPSHOT_BYTES:
        raise SnapshotError(f"{path} is larger than {MAX_SNAPSHOT_BYTES >> 20} MiB: not a snapshot")
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
        raise SnapshotError(f"{path} is not a snapshot's JSON ({type(e).__name__}: {e})") from None


def _int(obj, key, path, lo, hi, nullable=False):
    v = obj.get(key) if isinstance(obj, dict) else None
    if v is None and nullable and isinstance(obj, dict) and key in obj:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise SnapshotError(f"{path}.{key}: expected an integer{' or null' if nullable else ''}, found {v!r:.40}")
    if not lo <= v <= hi:
        raise SnapshotError(f"{path}.{key}: {v} is outside {lo}..{hi}")
    return v


def arenas_from_snapshot(doc: Any) -> list[Arena]:
    """The arenas of a snapshot (the plugin's, or arenascope-plan --snapshot's) as decode.Arena,
    so that `arena plan --snapshot FILE` draws their plans with the same chart as a target's.
    Checks what the chart needs; SnapshotError names the first field that is wrong ($.arenas[0]...)."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise SnapshotError(f"not an arenascope snapshot (no \"schema\": \"{SCHEMA}\")")
    if doc.get("version") not in READS:
        raise SnapshotError(f"snapshot version {doc.get('version')!r:.20}: this plugin reads versions "
                            f"{' and '.join(map(str, READS))}")
    if not isinstance(doc.get("source"), dict):
        raise SnapshotError("$.source: expected an object")
    arenas = doc.get("arenas")
    if not isinstance(arenas, list) or len(arenas) > 16:
        raise SnapshotError("$.arenas: expected an array of at most 16 arenas")
    flag_bits = {name: bit for bit, name in abi.REGION_FLAGS.items()}
    big = (1 << 64) - 1
    out = []
    for ai, a in enumerate(arenas):
        ap = f"$.arenas[{ai}]"
        if not isinstance(a, dict):
            raise SnapshotError(f"{ap}: expected an object")
        size = _int(a, "size_bytes", ap, 0, big)
        head, temp, tail = (_int(a, k, ap, 0, size) for k in ("head_bytes", "temp_bytes", "tail_offset"))
        regions_in = a.get("regions")
        if not isinstance(regions_in, list) or len(regions_in) > MAX_REGIONS:
            raise SnapshotError(f"{ap}.regions: expected an array of at most {MAX_REGIONS} regions")
        regions = []
        for ri, r in enumerate(regions_in):
            rp = f"{ap}.regions[{ri}]"
            if not isinstance(r, dict):
                raise SnapshotError(f"{rp}: expected an object")
            if _int(r, "index", rp, 0, big) != ri:
                raise SnapshotError(f"{rp}.index is {r['index']}: regions must be in index order")
            offset, rsize = _int(r, "offset", rp, 0, size), _int(r, "size_bytes", rp, 0, size)
            if offset + rsize > size:
                raise SnapshotError(f"{rp}: +{offset}..+{offset + rsize} runs past the arena's {size} B")
            first = _int(r, "first_use", rp, 0, MAX_SCOPE, nullable=True)
            last = _int(r, "last_use", rp, 0, MAX_SCOPE, nullable=True)
            if (first is None) != (last is None) or (first is not None and first > last):
                raise SnapshotError(f"{rp}: first_use {first} and last_use {last} are not a lifetime")
            kind, flags = r.get("kind"), r.get("flags")
            if kind not in ("tensor", "scratch", "persistent", "metadata"):
                raise SnapshotError(f"{rp}.kind: {kind!r:.40} is not tensor, scratch, persistent or metadata")
            if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
                raise SnapshotError(f"{rp}.flags: expected an array of strings")
            # an agent's ids are 16-bit (0xFFFF: none); a planner's snapshot numbers a model's tensors
            rid = _int(r, "id", rp, 0, MAX_REGIONS * 4, nullable=True)
            name = r.get("name") if isinstance(r.get("name"), str) else r.get("label")
            regions.append(Region(
                index=ri, offset=offset, size=rsize, id=abi.ID_NONE if rid is None else rid, kind=kind,
                flags=sum(flag_bits.get(f, 0) for f in flags),
                first_use=abi.USE_NONE if first is None else first, last_use=abi.USE_NONE if last is None else last,
                name=name if isinstance(name, str) else None,
                shape=r.get("shape") if isinstance(r.get("shape"), list) else None,
                dtype=r.get("dtype") if isinstance(r.get("dtype"), str) else None))
        out.append(Arena(index=_int(a, "index", ap, 0, 15), base_addr=_int(a, "base_addr", ap, 0, big),
                         regions_addr=0, model_addr=0, size=size, head=head, temp=temp, tail=tail, model_size=0,
                         canary=None, alignment=_int(a, "alignment_bytes", ap, 0, big),
                         region_count=len(regions), region_capacity=len(regions), flags=0, regions=regions))
    return out


VERDICTS = ("PASS", "WARN", "FAIL")


def _object_or_null(obj, key, path):
    v = obj.get(key)
    if v is not None and not isinstance(v, dict):
        raise SnapshotError(f"{path}.{key}: expected an object or null, found {v!r:.40}")


def _figure_values(spec, obj, path):
    for name, _text, get in spec:
        v = get(obj)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
            raise SnapshotError(f"{path}.{name}: expected an integer or null, found {v!r:.40}")


def check_for_diff(doc: Any) -> list[Arena]:
    """What `arena diff` reads of a snapshot, checked: arenas_from_snapshot's checks, then every
    figure analyse/diff.py compares (an integer or null), the checks ({rule, verdict} with
    verdict PASS/WARN/FAIL) and the verdict. Returns the arenas; SnapshotError names the field."""
    arenas = arenas_from_snapshot(doc)
    indices = [a.index for a in arenas]
    if len(set(indices)) != len(indices):
        raise SnapshotError(f"$.arenas: two arenas have the same index ({indices})")
    for ai, a in enumerate(doc["arenas"]):
        _object_or_null(a, "free_band", f"$.arenas[{ai}]")
        _figure_values(diff.ARENA_FIGURES, a, f"$.arenas[{ai}]")
    for key in ("stack", "guard"):
        if key not in doc:
            raise SnapshotError(f"$.{key}: missing (a snapshot has a stack and a guard, null when there is none)")
        _object_or_null(doc, key, "$")
    _figure_values(diff.TARGET_FIGURES, doc, "$")
    checks = doc.get("checks")
    if not isinstance(checks, list):
        raise SnapshotError("$.checks: expected an array")
    for ci, c in enumerate(checks):
        if not isinstance(c, dict) or not isinstance(c.get("rule"), str) or c.get("verdict") not in VERDICTS:
            raise SnapshotError(f"$.checks[{ci}]: expected {{rule, verdict PASS/WARN/FAIL}}, found {c!r:.60}")
    if doc.get("verdict") not in VERDICTS:
        raise SnapshotError(f"$.verdict: expected PASS, WARN or FAIL, found {doc.get('verdict')!r:.40}")
    return arenas


def read_for_diff(path: str) -> tuple[dict, list[Arena]]:
    """A snapshot file for `arena diff` (~ expanded): (its JSON object, its arenas). SnapshotError
    with one line naming the file, what is wrong and what to do."""
    path = os.path.expanduser(path)
    try:
        doc = load_snapshot_file(path)
        return doc, check_for_diff(doc)
    except SnapshotError as e:
        text = str(e) if str(e).startswith(("cannot read", path)) else f"{path}: {e}"
        raise SnapshotError(f"{text}; give a snapshot `arena snapshot FILE` or `arenascope-plan --snapshot FILE` "
                            f"wrote (docs/snapshot-schema.md, version {VERSION})") from None


# The schema every snapshot keeps, beside the package in a source checkout (a pip install does
# not ship docs/); VALIDATE_ENV=1 makes every write check against it (the test suite sets it).
SCHEMA_FILE = pathlib.Path(__file__).resolve().parents[3] / "docs" / "snapshot-schema.json"
VALIDATE_ENV = "ARENASCOPE_VALIDATE_SNAPSHOTS"


def schema_errors(snap: dict, limit: int = 3) -> list[str] | None:
    """Up to `limit` "$.path: message" violations of docs/snapshot-schema.json by `snap` ([]: it
    keeps it), or None when it cannot be checked here (no python3-jsonschema, no docs/). The
    check costs about 0.15 ms a region, so it runs on a write only when VALIDATE_ENV is set."""
    try:
        import jsonschema  # pylint: disable=import-outside-toplevel  (optional: tests and bug reports)
        schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    except (ImportError, OSError, ValueError):
        return None
    errors = jsonschema.Draft202012Validator(schema).iter_errors(snap)
    return [f"{e.json_path}: {e.message[:200]}" for e in itertools.islice(errors, limit)]


def write_snapshot_file(snap: dict, path: str | os.PathLike[str]) -> None:
    """Writes `snap` to `path` whole or not at all (present/files.write_whole: a unique temporary
    file, the file's mode kept). OSError on failure; SnapshotError, and nothing written, when
    VALIDATE_ENV is set and the snapshot breaks its schema (a bug of this tool: say so)."""
    if os.environ.get(VALIDATE_ENV) == "1":
        errors = schema_errors(snap)
        if errors:
            raise SnapshotError(f"the snapshot for {os.fspath(path)} breaks docs/snapshot-schema.json ("
                                + "; ".join(errors) + "): nothing written. This is arenascope's bug: please "
                                "report it with `arena info` and `arena check`'s output")
    files.write_whole(path, lambda f: f.write(jsontext.dumps(snap).encode("utf-8")))


def save(snap: dict, path: str) -> str:
    """Writes snap to path (~ expanded) as write_snapshot_file does, for `arena snapshot` and
    `arenascope snapshot`; returns its one-line summary. SnapshotError when the path is
    not a regular file (a FIFO would hang the writer); OSError when it cannot be written."""
    path = os.path.expanduser(path)
    if os.path.exists(path) and not os.path.isfile(path):
        raise SnapshotError(f"{path} is not a regular file: give a file name for the snapshot")
    write_snapshot_file(snap, path)
    return (f"wrote {path} ({len(snap['arenas'])} arena(s), "
            f"{sum(len(a['regions']) for a in snap['arenas'])} regions, verdict {snap['verdict']})")
