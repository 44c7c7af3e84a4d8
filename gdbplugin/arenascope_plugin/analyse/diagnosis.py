"""The post-mortem of one stop, computed once: the fault (or why there is none), its verdicts and
notes, and every figure and line the reports show about it. `arena fault` (text and --json),
the standalone tool's `fault`, snapshots (so the viewer, the HTML report and the live link) and
`arena check` render a Diagnosis; none of them reads target memory or decides a verdict again.
The same Diagnosis comes from a live stop, a RAM dump (acquire/dumped.py) or the live poller:
only the readers differ.

    diag = diagnose(ctx)        # ctx: what pipeline.gather() found

Its JSON (the snapshot's "fault", `arena fault --json`) is present/faultjson.py's.
"""
from dataclasses import dataclass, field
from typing import Any

from arenascope_plugin import ports
from arenascope_plugin.analyse import faults, figures, postmortem
from arenascope_plugin.decode.descriptor import Region
from arenascope_plugin.ports import Fault, faultread

PipelineContext = Any  # pipeline.Context: the stage above this one, so not imported here
UNKNOWN = "UNKNOWN"    # `arena fault --json`'s verdict when nothing could be judged
STACK_RAN = "in the range the stack ran over"  # postmortem's words for an object it cannot say more of


@dataclass
class Diagnosis:
    """What diagnose() found. fault: None when there is none (no_fault says why); findings: the
    verdicts and notes (empty for a fault from before a reset, whose arena is gone); the rest are
    the lines the text report prints, computed here so the report only lays them out."""
    fault: Fault | None
    damaged: list[Region] = field(default_factory=list)
    no_fault: str = ""
    findings: faults.Findings = field(default_factory=faults.Findings)
    tflm_verdicts: list[postmortem.Verdict] = field(default_factory=list)
    pc_where: str | None = None
    access: str | None = None                 # ARMv6-M / v8-M Baseline: what the faulting instruction did
    lr: list[str] = field(default_factory=list)
    frame_damage: list[str] = field(default_factory=list)  # stacked registers pointing into damaged regions
    stuck_loop: str | None = None             # the handler's endless loop, when the core spins in it
    stale_address: str | None = None          # a stale fault: where its faulting address is in this boot's arena
    subject: bool = False                     # an arena or TFLM's objects were read (else no verdict can be drawn)
    arena_present: bool = False               # an arena's descriptor (the agent's, or rebuilt agentless)
    tflm_present: bool = False                # TFLM's objects were looked for (agentless, or no arena published)
    interpreter_read: bool = False            # ... and an interpreter was read
    why_no_verdict: str | None = None         # why not (the gather's note)
    no_interpreter: list[str] = field(default_factory=list)  # TFLM's evidence when no interpreter could be read
    core_unknown: str = ""                    # why the core's state (in a handler or not) is unknown, "" known

    # (address, size, what, why): found overwritten (checksums, TFLM's values gone), or lying where the
    # stack ran (its words may be the stack's or still TFLM's: `why` says which)
    overwritten: list[tuple[int, int, str, str]] = field(default_factory=list)

    def overwritten_at(self, addr: int, size: int = 1) -> list[str]:
        """What diagnose() found overwritten in [addr, addr + size), a line each (`arena whereis`,
        $arena_owner, the printers)."""
        return [f"{addr:#x} is in {what}, " + (f"where the stack ran ({at:#x}-{at + n:#x}, {n} B): {why}"
                                               if why.startswith(STACK_RAN) else
                                               f"overwritten at {at:#x}-{at + n:#x} ({n} B): {why}")
                for at, n, what, why in self.overwritten if at < addr + size and addr < at + n]

    def overwritten_regions(self, desc) -> set[tuple[int, int]]:
        """{(arena index, region index)} of the regions holding overwritten bytes (`arena regions`,
        `arena map`): the agent's damaged regions, and those TFLM's overwritten objects lie in."""
        out = set()
        for a in getattr(desc, "arenas", None) or []:
            for r in a.regions:
                lo = a.base_addr + r.offset
                if r.size and any(at < lo + r.size and lo < at + size for at, size, _, _ in self.overwritten):
                    out.add((a.index, r.index))
        return out

    @property
    def verdicts(self) -> list[postmortem.Verdict]:
        return self.findings.verdicts

    @property
    def failing(self) -> bool:
        """Whether this stop is a failure: a fault of this boot, or a verdict drawn without one."""
        return (self.fault is not None and not self.fault.stale) or bool(self.verdicts)

    @property
    def notes(self) -> list[str]:
        """The facts that are not verdicts; for a fault from before a reset only where its faulting
        address lies in this boot's arena."""
        if self.fault is not None and self.fault.stale:
            return [n for n in (self.stale_address,) if n]
        return self.findings.notes

    @property
    def verdict(self) -> str:
        """FAIL: a fault of this boot or a verdict; UNKNOWN: nothing to judge by (no arena and no
        TFLM objects read, or the core's state unknown with nothing found); PASS otherwise."""
        if self.failing:
            return figures.FAIL
        return UNKNOWN if not self.subject or self.core_unknown else figures.PASS

    def check(self) -> figures.Check | None:
        """The `fault` rule for `arena check` and the snapshot's checks: FAIL with the exception and
        the first verdict when a fault of this boot is there, else None (the other rules say the rest)."""
        f = self.fault
        if f is None or f.stale:
            return None
        first = _first_sentence(self.verdicts[0].headline.removeprefix("VERDICT: ")) if self.verdicts else \
            "no arena verdict"
        return figures.Check("fault", figures.FAIL, f"{f.exception or 'a fault'} this boot: {first} "
                             "(`arena fault` gives the evidence)")


def _first_sentence(text: str) -> str:
    """The text up to its first full stop outside parentheses (a check's reason is one line)."""
    depth = 0
    for i, c in enumerate(text):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if c == "." and depth == 0 and (i + 1 == len(text) or text[i + 1] == " "):
            return text[:i + 1]
    return text


def diagnose(ctx: PipelineContext) -> Diagnosis:
    """The Diagnosis of what gather found, once per gather (kept in ctx.diagnosis)."""
    if getattr(ctx, "diagnosis", None) is not None:
        return ctx.diagnosis
    f, damaged, note = faultread.find_fault(ctx)
    d = Diagnosis(fault=f, damaged=damaged, no_fault="" if f is not None else note,
                  subject=ctx.desc is not None or ctx.tflm is not None,
                  arena_present=ctx.desc is not None, tflm_present=ctx.tflm is not None,
                  interpreter_read=ctx.tflm is not None and bool(ctx.tflm.interpreter), why_no_verdict=ctx.note)
    if f is None:
        d.core_unknown = _core_unknown(ctx)
    if d.subject and (f is None or not f.stale):
        d.findings = faults.arena_verdict(ctx, f, damaged)
    if f is not None and f.stale and ctx.desc is not None:
        d.stale_address = faults.address_note(ctx, f)
    if ctx.tflm is not None and not ctx.tflm.interpreter:
        d.no_interpreter = list(ctx.tflm.evidence)  # no interpreter to read: why (e.g. stuck in its constructor)
    d.tflm_verdicts = list(faults.tflm_verdicts(ctx, f))
    if f is not None and f.frame:
        d.pc_where = faults.where(ctx.symbols, f.pc)
        d.access = ctx.port.access_line(ctx, f)
        d.lr = faults.lr_lines(ctx, f)
        if ctx.desc is not None and ctx.desc.arenas:
            arena = ctx.desc.arenas[0]
            for name, value in f.argument_registers:
                for r in damaged:
                    if arena.base_addr + r.offset <= value < arena.base_addr + r.end:
                        d.frame_damage.append(
                            f"{name} {value:#x} points into {figures.region_label(r)} (+{r.offset}..+{r.end}), "
                            "overwritten since allocation: the faulting code was using damaged data")
    if f is not None and f.halted_in_handler:
        halt = faults.halt_of(ctx)
        if halt.spinning and halt.in_handler:  # e.g. CubeMX's `while (1) {}`: `continue` never returns
            d.stuck_loop = (f"the core is stuck in {halt.function or 'the handler'}'s endless loop at {halt.pc:#x}: "
                            "continuing will not get past it; read the fault now, then reset")
    d.overwritten = _overwritten(ctx, d)
    ctx.diagnosis = d
    return d


def _core_unknown(ctx: PipelineContext) -> str:
    """Why whether the core is in a fault handler cannot be known (an ELF no port serves; no core
    registers and nothing else to read, such as a RAM dump without its registers file), or ""."""
    port = ctx.port
    abi = ctx.symbols.abi()
    if abi is not None and ports.for_abi(abi) is None and abi != "x86_64-sysv":
        return (f"the firmware's ELF is for {abi}, which no architecture port of arenascope serves (it knows "
                + ", ".join(p.name for p in ports.all_ports()) + "): whether it stopped in a fault handler, and "
                "why, is not known (`info registers` shows the core's registers)")
    return port.state_unknown(ctx)


def _overwritten(ctx: PipelineContext, d: Diagnosis) -> list[tuple[int, int, str, str]]:
    """(address, size, what, why) of everything found overwritten: the agent's damaged regions
    (their checksums changed since allocation), the objects a verdict names as overwritten, and
    TFLM's objects that no longer hold TFLM's values. A fault from before a reset: none (the
    memory is the next boot's)."""
    if d.fault is not None and d.fault.stale:
        return []
    out = []
    if ctx.desc is not None and ctx.desc.arenas:
        a = ctx.desc.arenas[0]
        out += [(a.base_addr + r.offset, r.size, figures.region_label(r), "its checksum no longer matches the one "
                 "the agent took after allocation") for r in d.damaged]
    smashed = {o.addr for o in ctx.tflm.smashed} if ctx.tflm is not None else set()
    for v in d.verdicts + d.tflm_verdicts:
        for o in v.smashed:
            # The stack overwrote an object from its top down to its reach: the bytes below are TFLM's
            # still, unless the object's own check found it unsound (then all of it is suspect).
            lo = o["addr"] if v.reach is None or o["addr"] in smashed else max(o["addr"], v.reach)
            if lo < o["addr"] + o["size"]:
                out.append((lo, o["addr"] + o["size"] - lo, o["name"], o["why"]))
    if ctx.tflm is not None:
        out += [(o.addr, o.size, o.name, "; ".join(o.problems)) for o in ctx.tflm.smashed]
    seen, unique = set(), []
    for item in out:
        if (item[0], item[1]) not in seen:
            seen.add((item[0], item[1]))
            unique.append(item)
    return unique
