"""A soak run's record: the rules `arena check` judges (figures.Check, and the fault rule) after
each inference, the worst verdict of each with the inference where it was first reached, and the
highest arena and stack peaks with theirs. Pure Python: the front ends stop the target once an
inference (a breakpoint in GDB, the live link in the tool) and feed it; present/soak.py words it."""
from dataclasses import dataclass, field

from arenascope_plugin.analyse import figures

_RANK = {figures.PASS: 0, figures.WARN: 1, figures.FAIL: 2}


@dataclass
class Worst:
    """The worst verdict of one rule: its reason then, the inference it was first reached at, and
    how many inferences had it."""
    verdict: str
    reason: str
    first: int
    times: int = 1


@dataclass
class Peak:
    bytes: int
    at: int


@dataclass
class Soak:
    """inferences: how many were checked (the index of each is 1-based, the target's own count when
    it has one); rules: {rule: Worst}; arena_peaks: {arena index: Peak}; stack_peak: Peak or None;
    stopped: why the run ended before its count ("" when it did not)."""
    wanted: int
    inferences: int = 0
    first: int = 0
    last: int = 0
    rules: dict = field(default_factory=dict)
    arena_peaks: dict = field(default_factory=dict)
    stack_peak: Peak | None = None
    stopped: str = ""
    broken: bool = False   # the run stopped because the target did not run as it should (a hang, a fault)

    def observe(self, at: int, checks, arena_peaks: dict[int, int], stack_peak: int | None) -> None:
        """Records the checks after inference `at` (the target's count, or the run's own)."""
        self.inferences += 1
        self.first = self.first or at
        self.last = at
        self._rules(checks, at)
        for i, peak in arena_peaks.items():
            if i not in self.arena_peaks or peak > self.arena_peaks[i].bytes:
                self.arena_peaks[i] = Peak(peak, at)
        if stack_peak is not None and (self.stack_peak is None or stack_peak > self.stack_peak.bytes):
            self.stack_peak = Peak(stack_peak, at)

    def look(self, checks, at: int) -> None:
        """Records checks made where no inference ended (a fault during inference `at`, a reset, a
        hang): the fault record and the bands' state go into the report, no inference is counted."""
        self._rules(checks, at)

    def _rules(self, checks, at: int) -> None:
        for c in checks:
            w = self.rules.get(c.rule)
            if w is None or _RANK[c.verdict] > _RANK[w.verdict]:
                self.rules[c.rule] = Worst(c.verdict, c.reason, at)
            elif c.verdict == w.verdict:
                w.times += 1

    @property
    def ran(self) -> int:
        """How many inferences the run covers: from the first checked to the last (the live link
        checks some of them, each refresh; a stop in GDB checks each)."""
        return self.last - self.first + 1 if self.inferences else 0

    def stop(self, why: str, broken: bool) -> None:
        """Ends the run early: why, and whether the target failed to run (its verdict is then FAIL)."""
        self.stopped, self.broken = why, broken

    @property
    def verdict(self) -> str:
        """The worst verdict of any rule; FAIL when the target broke; WARN when no inference was
        checked (nothing to vouch for)."""
        worst = max((w.verdict for w in self.rules.values()), key=_RANK.get, default=figures.PASS)
        if self.broken:
            return figures.FAIL
        return worst if self.inferences else max(worst, figures.WARN, key=_RANK.get)

    @property
    def faulted(self) -> bool:
        w = self.rules.get("fault")
        return w is not None and w.verdict == figures.FAIL
