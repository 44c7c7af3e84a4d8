"""Two snapshots compared (`arena diff A.json B.json`, `arenascope diff`): what changed from A to B
(docs/diff.md). Pure Python on snapshots that present/snapshot.py's read_for_diff has checked
(the figures the diff reads are integers or null, the regions as arenas_from_snapshot makes them).

What is compared, and how things are matched:

- Arenas are matched by `index`. An arena only in A has vanished, one only in B has appeared.
- Per arena, the headline figures (ARENA_FIGURES: size, head, temp, tail, used, peak, the minimum
  arena, headroom, free-band intact bytes) and, once per snapshot, the stack's and the guard band's
  (TARGET_FIGURES: stack peak, room, guard intact bytes): each as A, B and the signed change
  B - A in bytes (null when either is unknown). A figure changed when A != B (null included).
- Regions: each region gets a key, the same for "the same region" in two builds, two stops, or
  the planner's prediction and the target:
  * a tensor (kind "tensor", or "persistent" with an id: a variable tensor) with an id: `tensor ID`
    (TFLM's tensor index: a head tensor that became persistent is still that tensor);
  * a scratch buffer with an id: `scratch ID` (TFLM's scratch buffer index);
  * anything else (the tail's persistent buffers and TFLM's own objects, which have no id): its
    label (the name when known, else "persistent"/"metadata"), with a trailing " (predicted)"
    removed: agentless mode names the tail objects it rebuilds from the prediction
    "MicroAllocator (predicted)", the planner "MicroAllocator"; written `label NAME`.
  A key held by one region in A and one in B matches them. Only in B: appeared; only in A:
  vanished.
  * Unnamed regions (no id, no name: a target read without the planner tool labels its tail
    objects only "metadata"/"persistent", see anonymous()) and the regions left over above are
    matched BY PLACE: a region of A and one of B at the same offset with the same size, when that
    place holds exactly one of each and one of them is unnamed (the key is the named one's).
  A name held by more than one region on either side, and unnamed regions of one kind left on
  both sides, are AMBIGUOUS: nothing tells which is which, so the diff does not guess. When both
  sides hold the same regions under that key (the same offsets, sizes, lifetimes, kinds and
  flags, in any order) they are counted unchanged; otherwise the key is reported as ambiguous,
  with the regions of each side (none of them is called moved, appeared or vanished).
- A matched pair is classified by what differs, possibly several of: `moved` (offset), `grew` /
  `shrank` (size), `lifetime` (first_use..last_use, or planned vs whole-run), `kind`, `flags`.
  Otherwise it is unchanged (counted; listed only with `all`). The label is not compared (a target
  without the planner names "tensor 3" what the prediction calls "conv0/relu").
- Checks are matched by rule (the k-th check of a rule in A with the k-th in B): a check changed
  when its verdict did, or it is in one snapshot only. Reasons are not compared (they carry the
  figures, compared above). The snapshots' worst verdicts are compared too.
- The fault: each side's exception, its verdicts' kinds, whether it is stale and how many regions
  it found overwritten (fault_summary); a fault in one snapshot only, or a different one, is a
  change. Its registers and prose are not compared.
- Whether A and B run different models (models_differ: two predictions of different files, plans
  of different scope counts, or tensors of the same index named or shaped differently): said
  first, since then the region-by-region comparison means little.
- Not compared: the source (ELF, time), the state (invoke counter), addresses (a prediction's
  arena is at 0), the plan's live-bytes curve, tasks and tflm objects.
"""
from collections import defaultdict
from dataclasses import dataclass, field

from arenascope_plugin.analyse import figures
from arenascope_plugin.decode import abi
from arenascope_plugin.decode.descriptor import Arena, Region

PREDICTED = " (predicted)"

# (JSON name, text name, how to read it from a snapshot's arena): every figure in bytes.
ARENA_FIGURES = [
    ("size_bytes", "size", lambda a: a.get("size_bytes")),
    ("head_bytes", "head", lambda a: a.get("head_bytes")),
    ("temp_bytes", "temp high-water", lambda a: a.get("temp_bytes")),
    ("tail_bytes", "tail", lambda a: a.get("tail_bytes")),
    ("used_bytes", "used", lambda a: a.get("used_bytes")),
    ("peak_bytes", "peak", lambda a: a.get("peak_bytes")),
    ("minimum_arena_bytes", "minimum arena", lambda a: a.get("minimum_arena_bytes")),
    ("headroom_bytes", "headroom", lambda a: a.get("headroom_bytes")),
    ("free_band_intact_bytes", "free band intact", lambda a: (a.get("free_band") or {}).get("intact_bytes")),
]
TARGET_FIGURES = [
    ("stack_peak_bytes", "stack peak", lambda d: (d.get("stack") or {}).get("peak_bytes")),
    ("stack_room_bytes", "stack room", lambda d: (d.get("stack") or {}).get("room_bytes")),
    ("guard_intact_bytes", "guard band intact", lambda d: (d.get("guard") or {}).get("intact_bytes")),
]
CHANGE_KINDS = ("moved", "grew", "shrank", "lifetime", "kind", "flags")


@dataclass
class Figure:
    """One figure in A and B (bytes, or None: unknown) and delta = B - A (None when either is)."""
    name: str
    text: str
    a: int | None
    b: int | None

    @property
    def delta(self) -> int | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def changed(self) -> bool:
        return self.a != self.b

    def json(self) -> dict:
        return {"name": self.name, "a": self.a, "b": self.b, "delta": self.delta}


@dataclass
class RegionChange:
    """A region matched in A and B (a and b), and what differs (CHANGE_KINDS; empty: unchanged)."""
    key: str
    a: Region
    b: Region
    changes: list[str]


@dataclass
class Ambiguous:
    """A key more than one region holds on a side, whose regions differ: not matched one by one."""
    key: str
    a: list[Region]
    b: list[Region]


@dataclass
class ArenaDiff:
    """One arena index: `side` "both", "a" (vanished) or "b" (appeared); figures and regions
    only for "both"."""
    index: int
    side: str
    figures: list[Figure] = field(default_factory=list)
    changed: list[RegionChange] = field(default_factory=list)
    unchanged: list[RegionChange] = field(default_factory=list)
    appeared: list[tuple[str, Region]] = field(default_factory=list)
    vanished: list[tuple[str, Region]] = field(default_factory=list)
    ambiguous: list[Ambiguous] = field(default_factory=list)
    ambiguous_same: int = 0   # regions under ambiguous keys that are the same on both sides

    @property
    def identical(self) -> bool:
        return self.side == "both" and not (any(f.changed for f in self.figures) or self.changed or self.appeared
                                             or self.vanished or self.ambiguous)


@dataclass
class CheckChange:
    """A rule whose verdict differs: a or b is None when the rule is in one snapshot only."""
    rule: str
    a: str | None
    b: str | None


@dataclass
class Diff:
    """diff(A, B): the arenas (by index), the stack and guard figures, the checks whose verdict
    changed (and how many did not), and the two worst verdicts."""
    arenas: list[ArenaDiff]
    target: list[Figure]
    checks: list[CheckChange]
    checks_same: int
    verdict_a: str
    verdict_b: str
    fault_a: dict | None = None      # fault_summary() of each side: the exception, the verdicts, damage
    fault_b: dict | None = None
    models: str | None = None        # why A and B run different models (models_differ), or None

    @property
    def fault_changed(self) -> bool:
        return self.fault_a != self.fault_b

    @property
    def identical(self) -> bool:
        return (all(a.identical for a in self.arenas) and not any(f.changed for f in self.target)
                and not self.checks and self.verdict_a == self.verdict_b and not self.fault_changed
                and not self.models)


def normalised_label(r: Region) -> str:
    """The region's label (figures.region_label) without agentless mode's " (predicted)"."""
    label = figures.region_label(r)
    return label[:-len(PREDICTED)] if label.endswith(PREDICTED) else label


def region_key(r: Region) -> str:
    """What identifies the region across snapshots (module docstring): `tensor ID`, `scratch ID`
    or `label NAME`."""
    if r.id != abi.ID_NONE and r.kind in ("tensor", "persistent"):
        return f"tensor {r.id}"
    if r.id != abi.ID_NONE and r.kind == "scratch":
        return f"scratch {r.id}"
    return f"label {normalised_label(r)}"


def _lifetime(r: Region):
    return (r.first_use, r.last_use) if r.planned else None


def _signature(r: Region):
    return r.offset, r.size, _lifetime(r) or (-1, -1), r.kind, r.flags


def changes_of(a: Region, b: Region) -> list[str]:
    """What differs between two matched regions, in CHANGE_KINDS' order."""
    out = []
    if a.offset != b.offset:
        out.append("moved")
    if b.size > a.size:
        out.append("grew")
    elif b.size < a.size:
        out.append("shrank")
    if _lifetime(a) != _lifetime(b):
        out.append("lifetime")
    if a.kind != b.kind:
        out.append("kind")
    if a.flags != b.flags:
        out.append("flags")
    return out


def anonymous(r: Region) -> bool:
    """A region with neither an id nor a name (a target's tail object without the planner tool):
    its label is its kind (a snapshot's reader gives the label as the name when there is none)."""
    return r.id == abi.ID_NONE and (not r.name or r.name == r.kind)


def _grouped(regions):
    groups = defaultdict(list)
    for r in regions:
        groups[region_key(r)].append(r)
    return groups


def _match(out: ArenaDiff, key: str, a: Region, b: Region) -> None:
    c = RegionChange(key, a, b, changes_of(a, b))
    (out.changed if c.changes else out.unchanged).append(c)


def _by_place(out: ArenaDiff, left_a, left_b) -> tuple[list, list]:
    """Pairs a leftover region of A with one of B at the same offset with the same size when
    that place holds exactly one of each and one of the two is anonymous; returns the rest."""
    at_a, at_b = defaultdict(list), defaultdict(list)
    for k, r in left_a:
        at_a[r.offset, r.size].append((k, r))
    for k, r in left_b:
        at_b[r.offset, r.size].append((k, r))
    paired = set()
    for place, here in at_a.items():
        there = at_b.get(place, [])
        if len(here) == len(there) == 1 and (anonymous(here[0][1]) or anonymous(there[0][1])):
            (ka, ra), (kb, rb) = here[0], there[0]
            _match(out, kb if anonymous(ra) else ka, ra, rb)
            paired.add(place)
    return ([kr for kr in left_a if (kr[1].offset, kr[1].size) not in paired],
            [kr for kr in left_b if (kr[1].offset, kr[1].size) not in paired])


def diff_regions(out: ArenaDiff, ra: list[Region], rb: list[Region]) -> None:
    """Matches A's regions to B's (module docstring) into out: O(n log n) in the regions."""
    ga, gb = _grouped(r for r in ra if not anonymous(r)), _grouped(r for r in rb if not anonymous(r))
    left_a = [(region_key(r), r) for r in ra if anonymous(r)]
    left_b = [(region_key(r), r) for r in rb if anonymous(r)]
    for k in list(ga) + [k for k in gb if k not in ga]:   # A's table order, then B's new keys
        la, lb = ga.get(k, []), gb.get(k, [])
        if not lb or not la:
            (left_a if la else left_b).extend((k, r) for r in la or lb)
        elif len(la) == len(lb) == 1:
            _match(out, k, la[0], lb[0])
        elif sorted(map(_signature, la)) == sorted(map(_signature, lb)):
            out.ambiguous_same += len(la)
        else:
            out.ambiguous.append(Ambiguous(k, la, lb))
    left_a, left_b = _by_place(out, left_a, left_b)
    # Anonymous regions left on both sides under one kind: nothing tells which is which.
    anon_a, anon_b = _grouped(r for _, r in left_a if anonymous(r)), _grouped(r for _, r in left_b if anonymous(r))
    both = set(anon_a) & set(anon_b)
    for k in sorted(both):
        if sorted(map(_signature, anon_a[k])) == sorted(map(_signature, anon_b[k])):
            out.ambiguous_same += len(anon_a[k])
        else:
            out.ambiguous.append(Ambiguous(k, anon_a[k], anon_b[k]))
    out.vanished += [(k, r) for k, r in left_a if not (anonymous(r) and k in both)]
    out.appeared += [(k, r) for k, r in left_b if not (anonymous(r) and k in both)]


def _figures(spec, a, b):
    return [Figure(name, text, get(a), get(b)) for name, text, get in spec]


def _checks(doc):
    seen = defaultdict(int)
    out = {}
    for c in doc.get("checks") or []:
        out[(c["rule"], seen[c["rule"]])] = c["verdict"]
        seen[c["rule"]] += 1
    return out


def fault_summary(doc: dict) -> dict | None:
    """What a snapshot's fault comes to, for comparing (None: no fault): {exception, stale,
    verdicts: [kind], damaged_regions: count (the agent's checksums), overwritten: [the objects the
    verdicts name as overwritten (TFLM's, agentless)]}. Its registers and prose are not compared."""
    f = doc.get("fault")
    if not isinstance(f, dict):
        return None
    verdicts = [v for v in f.get("verdicts") or [] if isinstance(v, dict)]
    return {"exception": f.get("exception"), "stale": bool(f.get("stale")),
            "verdicts": [v.get("kind") for v in verdicts],
            "damaged_regions": len(f.get("damaged_regions") or []),
            "overwritten": sorted({o.get("name") for v in verdicts for o in v.get("smashed") or []
                                   if isinstance(o, dict) and isinstance(o.get("name"), str)})}


def models_differ(doc_a: dict, arenas_a: list[Arena], doc_b: dict, arenas_b: list[Arena]) -> str | None:
    """Why A and B run different models, or None when nothing says so: two predictions of
    different .tflite files; plans with different scope counts (operators); or tensors of the same
    index named or shaped differently on both sides (at least half of those both name)."""
    ma, mb = (doc_a.get("source") or {}).get("model"), (doc_b.get("source") or {}).get("model")
    if ma and mb and ma != mb:
        return f"A predicts {ma}, B {mb}"
    for ra, rb in zip(doc_a.get("arenas") or [], doc_b.get("arenas") or [], strict=False):
        sa, sb = (ra.get("plan") or {}).get("scopes"), (rb.get("plan") or {}).get("scopes")
        if sa and sb and sa != sb:
            return f"arena {ra.get('index')}'s plans have {sa} and {sb} scopes (operators + 1)"
    for a, b in zip(arenas_a, arenas_b, strict=False):
        ta = {r.id: r for r in a.regions if r.kind == "tensor" and r.id != abi.ID_NONE and r.name}
        tb = {r.id: r for r in b.regions if r.kind == "tensor" and r.id != abi.ID_NONE and r.name}
        both = sorted(set(ta) & set(tb))
        other = [i for i in both if ta[i].name != tb[i].name or (ta[i].shape and tb[i].shape and
                                                                  ta[i].shape != tb[i].shape)]
        if both and 2 * len(other) >= len(both):
            i = other[0]
            return (f"{len(other)} of the {len(both)} tensors both name differ (tensor {i}: '{ta[i].name}' in A, "
                    f"'{tb[i].name}' in B)")
    return None


def compare(doc_a: dict, arenas_a: list[Arena], doc_b: dict, arenas_b: list[Arena]) -> Diff:
    """diff(A, B) of two snapshots checked by present/snapshot.py's read_for_diff (doc: the JSON
    object; arenas: its arenas as decode.Arena, in the same order as doc["arenas"])."""
    by_a = {a.index: (a, raw) for a, raw in zip(arenas_a, doc_a["arenas"], strict=True)}
    by_b = {b.index: (b, raw) for b, raw in zip(arenas_b, doc_b["arenas"], strict=True)}
    arenas = []
    for index in sorted(set(by_a) | set(by_b)):
        if index not in by_b:
            arenas.append(ArenaDiff(index, "a"))
            continue
        if index not in by_a:
            arenas.append(ArenaDiff(index, "b"))
            continue
        (aa, raw_a), (ab, raw_b) = by_a[index], by_b[index]
        d = ArenaDiff(index, "both", figures=_figures(ARENA_FIGURES, raw_a, raw_b))
        diff_regions(d, aa.regions, ab.regions)
        arenas.append(d)
    ca, cb = _checks(doc_a), _checks(doc_b)
    changed = [CheckChange(rule, ca.get((rule, k)), cb.get((rule, k)))
               for rule, k in list(ca) + [key for key in cb if key not in ca] if ca.get((rule, k)) != cb.get((rule, k))]
    return Diff(arenas=arenas, target=_figures(TARGET_FIGURES, doc_a, doc_b), checks=changed,
                checks_same=len(set(ca) | set(cb)) - len(changed),
                verdict_a=doc_a["verdict"], verdict_b=doc_b["verdict"], fault_a=fault_summary(doc_a),
                fault_b=fault_summary(doc_b), models=models_differ(doc_a, arenas_a, doc_b, arenas_b))
