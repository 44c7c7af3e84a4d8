"""A soak run in words and as JSON (`arena soak`, `arenascope soak`; analyse/soak.py): what ran,
then the worst of each rule with the inference where it first happened, then the peaks."""
from arenascope_plugin.analyse import figures
from arenascope_plugin.present import style

FORMAT = "arenascope-soak/1"  # the JSON's contract: docs/stack-budget.md, "Soak"


def lines(s, how: str, seconds: float) -> list[str]:
    ran = f"{s.ran} of {s.wanted} {_inferences(s.wanted)}" if s.ran < s.wanted else f"{s.ran} {_inferences(s.ran)}"
    if s.inferences != s.ran:
        ran += f" (checked at {s.inferences} of them)"
    out = [f"soak: {ran} in {seconds:.1f} s ({how}): {style.paint(s.verdict, s.verdict)}"]
    if s.stopped:
        out.append(f"  stopped early: {s.stopped}")
    if s.rules:
        out.append("worst of each rule over the run (the inference where it first happened):")
        for rule, w in sorted(s.rules.items(), key=lambda kv: (-_rank(kv[1].verdict), kv[0])):
            when = f"all {w.times}" if w.verdict == figures.PASS else f"first at inference {w.first}, {w.times} in all"
            out.append(f"  {style.paint(w.verdict, w.verdict)}  {rule:<10} {when}: {w.reason}")
    for i, p in sorted(s.arena_peaks.items()):
        out.append(f"arena {i} peak: {p.bytes} B, first seen at inference {p.at}")
    if s.stack_peak is not None:
        out.append(f"stack peak: {s.stack_peak.bytes} B, first seen at inference {s.stack_peak.at}")
    return out


def _inferences(n: int) -> str:
    return "inference" if n == 1 else "inferences"


def _rank(verdict: str) -> int:
    return {figures.PASS: 0, figures.WARN: 1, figures.FAIL: 2}[verdict]


def json_doc(s, how: str, seconds: float) -> dict:
    return {"format": FORMAT, "inferences": s.ran, "checked": s.inferences, "wanted": s.wanted,
            "first_inference": s.first, "last_inference": s.last, "seconds": round(seconds, 3),
            "how": how, "verdict": s.verdict, "stopped": s.stopped or None,
            "rules": {r: {"verdict": w.verdict, "reason": w.reason, "first": w.first, "times": w.times}
                      for r, w in sorted(s.rules.items())},
            "arena_peaks": [{"arena": i, "bytes": p.bytes, "first": p.at} for i, p in sorted(s.arena_peaks.items())],
            "stack_peak": None if s.stack_peak is None else {"bytes": s.stack_peak.bytes,
                                                             "first": s.stack_peak.at}}
