"""The fault as JSON, from the post-mortem of one stop (analyse/diagnosis.Diagnosis, computed
once): the snapshot's "fault" (docs/snapshot-schema.md) and `arena fault --json`'s parts
(docs/command-json-schema.json). Nothing here reads target memory or decides a verdict."""
from typing import Any

# analyse/diagnosis.Diagnosis: present/ renders it and does not import the deciders.
Diagnosis = Any


def snapshot_fault(d: Diagnosis) -> dict | None:
    """The fault as the snapshot carries it (docs/snapshot-schema.md, "fault"): structured
    verdicts (kind, headline, evidence), notes, and stale when the fault is from before a
    reset (then no verdict is drawn from the arena in memory). None without a fault."""
    f = d.fault
    if f is None:
        return None
    # Version 3: the architecture's registers as a list (the port names and decodes them).
    return {"exception": f.exception, "source": f.source, "stale": f.stale, "arch": f.arch,
            "registers": [{"name": r.name, "value": r.value, "meaning": r.meaning} for r in f.registers()],
            "fault_address": ({"register": f.fault_address[0], "value": f.fault_address[1]}
                              if f.fault_address else None),
            "bits": f.status_lines(), "frame_addr": f.frame_addr,
            "frame": dict(zip(f.frame_names, f.frame, strict=False)) if f.frame else None,
            "pc_where": d.pc_where, "lr_where": "; ".join(d.lr) if f.frame else None,
            "causes": f.cause_lines() + [line for line in [d.access] if line],
            "verdicts": [v.json() for v in d.verdicts],
            "notes": d.notes,
            "damaged_regions": [r.index for r in d.damaged]}


def command_parts(d: Diagnosis) -> dict:
    """`arena fault --json`'s parts: the fault (null without one, with why in note), and the
    verdicts and notes whether or not there was a fault (TFLM's state alone can fail)."""
    notes = d.notes
    if not d.subject and d.why_no_verdict:
        notes = notes + [f"no arena verdict: {d.why_no_verdict}"]
    return {"fault": snapshot_fault(d), "note": None if d.fault is not None else d.no_fault,
            "verdicts": [v.json() for v in d.verdicts], "notes": notes, "verdict": d.verdict}
