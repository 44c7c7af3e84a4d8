"""`arena diff`'s text and JSON (docs/diff.md; the JSON's schema: docs/diff-schema.json) from
analyse/diff.py's Diff. What changed first (verdict, checks), then each arena's figures and one
line per region change, then the stack's; the last line is the summary. Nothing that did not
change is printed as a change: two equal snapshots give one line, "identical: ...".
Lines without newlines; colour through style.paint."""
from arenascope_plugin.analyse import diff, figures
from arenascope_plugin.decode import abi
from arenascope_plugin.decode.descriptor import Region
from arenascope_plugin.present import render, style

SCHEMA = "arenascope.diff"
VERSION = 1


def describe(doc: dict) -> str:
    """What a snapshot is of, in a few words: a model's prediction or a target at a time."""
    src, state = doc.get("source") or {}, doc.get("state") or {}
    if src.get("located_by") == "model":
        return f"the prediction for {src.get('model')} ({src.get('target')}) by {src.get('predicted_by')}"
    n = state.get("invokes")
    runs = f", {n} inference{'s' if n != 1 else ''}" if isinstance(n, int) and n else ""
    return f"{src.get('elf') or 'a target'} at {src.get('time')}{runs}"


def _value(n):
    return "unknown" if n is None else render.kib(n)


def _figure_line(f: diff.Figure) -> str:
    change = "" if f.delta is None else f"  {f.delta:+d} B"
    return f"  {f.text + ':':<20} {_value(f.a)} -> {_value(f.b)}{change}"


def _life(r: Region) -> str:
    return f"scopes {r.first_use}..{r.last_use}" if r.planned else "whole run"


def _name(key: str, *regions: Region) -> str:
    """The key, with the first label that says more than it (a tensor's name)."""
    if key.startswith("label "):
        return key[len("label "):]
    for r in regions:
        label = diff.normalised_label(r)
        if label != key and label != r.kind:
            return label if label.startswith(key) else f"{key} ({label})"
    return key


def _where(r: Region) -> str:
    return f"+{r.offset}, {r.size} B, {_life(r)}, {r.kind}" + (f", {','.join(r.flag_names)}" if r.flags else "")


def _change_text(c: diff.RegionChange) -> str:
    a, b = c.a, c.b
    parts = []
    if "moved" in c.changes:
        parts.append(f"+{a.offset} -> +{b.offset}")
    if a.size != b.size:
        parts.append(f"{a.size} B -> {b.size} B ({b.size - a.size:+d} B)")
    if "lifetime" in c.changes:
        parts.append(f"{_life(a)} -> {_life(b)}")
    if "kind" in c.changes:
        parts.append(f"{a.kind} -> {b.kind}")
    if "flags" in c.changes:
        parts.append(f"flags {','.join(a.flag_names) or '-'} -> {','.join(b.flag_names) or '-'}")
    return f"    {', '.join(c.changes):<14} {_name(c.key, b, a)}: {'; '.join(parts)}"


def _bytes(regions):
    return sum(r.size for r in regions)


def region_count(a: diff.ArenaDiff) -> int:
    """Region entries that changed: matched and different, appeared, vanished, ambiguous."""
    return len(a.changed) + len(a.appeared) + len(a.vanished) + sum(len(g.a) + len(g.b) for g in a.ambiguous)


def _arena_lines(a: diff.ArenaDiff, show_all: bool) -> list[str]:
    if a.side != "both":
        return [style.paint(f"arena {a.index}: only in {a.side.upper()} "
                            f"({'vanished' if a.side == 'a' else 'appeared'})", "title")]
    out = [style.paint(f"arena {a.index}:", "title")]
    out += [_figure_line(f) for f in a.figures if f.changed or show_all]
    same = len(a.unchanged) + a.ambiguous_same
    out.append(f"  regions: {same} unchanged, {len(a.changed)} changed, {len(a.appeared)} appeared, "
               f"{len(a.vanished)} vanished" + (f", {len(a.ambiguous)} ambiguous name(s)" if a.ambiguous else ""))
    flags_only = [c for c in a.changed if c.changes == ["flags"]]
    out += [_change_text(c) for c in a.changed if c not in flags_only]
    if flags_only and not show_all:  # e.g. "(predicted)" against a target: one line, not one a region
        kinds = sorted({f"{','.join(c.a.flag_names) or '-'} -> {','.join(c.b.flag_names) or '-'}" for c in flags_only})
        out.append(f"    {'flags only':<14} {len(flags_only)} region(s) differ only in their flags ("
                   + "; ".join(kinds[:3]) + ("; ..." if len(kinds) > 3 else "") + "): `--all` lists them")
    elif flags_only:
        out += [_change_text(c) for c in flags_only]
    out += [f"    {'appeared':<14} {_name(k, r)}: {_where(r)}" for k, r in a.appeared]
    out += [f"    {'vanished':<14} {_name(k, r)}: {_where(r)}" for k, r in a.vanished]
    out += [f"    {'ambiguous':<14} {_name(g.key, *g.a)}: {len(g.a)} region(s), {_bytes(g.a)} B in A; {len(g.b)}, "
            f"{_bytes(g.b)} B in B: neither an id nor a name tells them apart, so they are not matched one by one "
            "(`arena regions` lists them)" for g in a.ambiguous]
    if show_all:
        out += [f"    {'unchanged':<14} {_name(c.key, c.b, c.a)}: {_where(c.b)}" for c in a.unchanged]
    return out


def _fault_text(f: dict | None) -> str:
    if f is None:
        return "none"
    return (f"{f['exception'] or 'a fault'}" + (" (from before a reset)" if f["stale"] else "")
            + (f", verdicts {', '.join(f['verdicts'])}" if f["verdicts"] else "")
            + (f", {f['damaged_regions']} region(s) overwritten" if f["damaged_regions"] else "")
            + (f", overwritten: {', '.join(f['overwritten'][:6])}" + (" ..." if len(f["overwritten"]) > 6 else "")
               if f.get("overwritten") else ""))


def summary(d: diff.Diff) -> str:
    """The one-line summary: what changed, or "identical: ..." with what was compared."""
    regions = sum(len(a.unchanged) + a.ambiguous_same for a in d.arenas) + sum(region_count(a) for a in d.arenas)
    if d.identical:
        return (f"identical: {len(d.arenas)} arena(s), {regions} region(s), {d.checks_same} check(s), verdict "
                f"{d.verdict_a} (sources, times and addresses are not compared)")
    figs = sum(f.changed for a in d.arenas for f in a.figures) + sum(f.changed for f in d.target)
    arenas = sum(a.side != "both" for a in d.arenas)
    verdict = f"verdict {d.verdict_a} -> {d.verdict_b}" if d.verdict_a != d.verdict_b else \
        f"verdict {d.verdict_b} in both"
    return (f"differences: {figs} figure(s), {sum(region_count(a) for a in d.arenas)} region(s), "
            f"{len(d.checks)} check(s)" + (f", {arenas} arena(s)" if arenas else "")
            + (", the fault" if d.fault_changed else "") + f" changed; {verdict}"
            + ("; different models" if d.models else ""))


def text_lines(d: diff.Diff, name_a: str, doc_a: dict, name_b: str, doc_b: dict, show_all: bool = False) -> list:
    """`arena diff`'s report. name_*: the file names (or "the target now"); show_all: list the
    unchanged figures and regions too."""
    out = [style.paint(f"arena diff: A = {name_a} ({describe(doc_a)})", "title"),
           style.paint(f"            B = {name_b} ({describe(doc_b)})", "title")]
    if d.identical and not show_all:
        return out + [summary(d)]
    if d.models:
        out.append(style.paint(f"different models: {d.models}; the regions below are compared by index and name, "
                               "which means little across models", "WARN"))
    if d.verdict_a != d.verdict_b:
        out.append("verdict: " + style.paint(d.verdict_a, d.verdict_a) + " -> " + style.paint(d.verdict_b, d.verdict_b))
    if d.fault_changed:
        out.append("fault: " + _fault_text(d.fault_a) + " -> " + _fault_text(d.fault_b))
    if d.checks:
        out.append(style.paint(f"checks: {len(d.checks)} changed, {d.checks_same} unchanged", "title"))
        out += [f"  {c.rule + ':':<20} {c.a or '(none)'} -> " + (style.paint(c.b, c.b) if c.b else "(none)")
                for c in d.checks]
    for a in d.arenas:
        out += _arena_lines(a, show_all)
    stack = [_figure_line(f) for f in d.target if f.changed or show_all]
    if stack:
        out += [style.paint("stack and guard band:", "title")] + stack
    return out + [summary(d)]


def _region_json(r: Region) -> dict:
    return {"index": r.index, "id": None if r.id == abi.ID_NONE else r.id,
            "kind": r.kind, "offset": r.offset, "size_bytes": r.size,
            "first_use": r.first_use if r.planned else None, "last_use": r.last_use if r.planned else None,
            "flags": r.flag_names, "label": figures.region_label(r)}


def _arena_json(a: diff.ArenaDiff, show_all: bool) -> dict:
    out = {"index": a.index, "in": a.side, "identical": a.identical, "figures": [f.json() for f in a.figures]}
    if a.side != "both":
        out["regions"] = None
        return out
    out["regions"] = {
        "unchanged": len(a.unchanged) + a.ambiguous_same,
        "changed": [{"key": c.key, "name": _name(c.key, c.b, c.a), "changes": c.changes,
                     "a": _region_json(c.a), "b": _region_json(c.b)} for c in a.changed],
        "appeared": [{"key": k, "name": _name(k, r), "region": _region_json(r)} for k, r in a.appeared],
        "vanished": [{"key": k, "name": _name(k, r), "region": _region_json(r)} for k, r in a.vanished],
        "ambiguous": [{"key": g.key, "a_count": len(g.a), "b_count": len(g.b), "a_bytes": _bytes(g.a),
                       "b_bytes": _bytes(g.b), "a": [_region_json(r) for r in g.a],
                       "b": [_region_json(r) for r in g.b]} for g in a.ambiguous],
    }
    if show_all:
        out["regions"]["unchanged_list"] = [{"key": c.key, "name": _name(c.key, c.b, c.a), "a": _region_json(c.a),
                                             "b": _region_json(c.b)} for c in a.unchanged]
    return out


def json_doc(d: diff.Diff, name_a: str | None, doc_a: dict, name_b: str | None, doc_b: dict,
             show_all: bool = False) -> dict:
    """`arena diff --json`: the object docs/diff-schema.json describes (name_*: the file, None for
    the live target)."""
    return {
        "schema": SCHEMA, "version": VERSION, "identical": d.identical, "summary": summary(d),
        "a": {"file": name_a, "what": describe(doc_a), "verdict": d.verdict_a},
        "b": {"file": name_b, "what": describe(doc_b), "verdict": d.verdict_b},
        "verdict": {"a": d.verdict_a, "b": d.verdict_b, "changed": d.verdict_a != d.verdict_b},
        "checks": {"unchanged": d.checks_same, "changed": [{"rule": c.rule, "a": c.a, "b": c.b} for c in d.checks]},
        "arenas": [_arena_json(a, show_all) for a in d.arenas],
        "target": {"figures": [f.json() for f in d.target]},
        "fault": {"a": d.fault_a, "b": d.fault_b, "changed": d.fault_changed},
        "models_differ": d.models,
    }
