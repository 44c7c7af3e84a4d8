"""Text of the reports that are more than a table: TFLM's condition, `arena fault`. Lines without
newlines; colour through style.paint."""
from arenascope_plugin import version
from arenascope_plugin.decode import tflmstate
from arenascope_plugin.present import render, style


def tflm_state_lines(ctx):
    """The agentless interpreter's condition and its evidence, object by object (nothing when
    TFLM is healthy)."""
    st = ctx.tflm
    if st is None or st.condition == "allocated":
        return []
    out = [style.paint(f"TFLM state: {st.condition}: {tflmstate.CONDITIONS[st.condition]}",
                       "WARN" if st.condition == "not-started" else "FAIL")]
    out += [f"  {e}" for e in st.evidence]
    out.append("  objects checked: " + ", ".join(f"{o.name} at {o.addr:#x} ({o.size} B) "
                                                + ("sound" if o.sound else "NOT SOUND (above)") for o in st.objects))
    if ctx.desc is not None and ctx.desc.agentless:
        out.append("  the figures and regions below are rebuilt from the ELF (the arena's bounds), the allocator where "
                   "it is sound and the planner's prediction for the model (regions marked '(predicted)'), not from "
                   "TFLM's pointers")
    return out


def no_fault_lines(d) -> list[str]:
    """`arena fault` when there is no fault (analyse/diagnosis.Diagnosis d): why, and what TFLM's
    objects say."""
    lines = [("arena fault: " + d.core_unknown + "; and " if d.core_unknown else
              "arena fault: no fault: the core is not in a fault handler, and ") + d.no_fault]
    if d.interpreter_read and (d.verdicts or d.no_interpreter or d.findings.details()):
        lines[0] += "; what TFLM's objects say:"
    if d.subject:
        lines += [v.headline for v in d.verdicts] + d.no_interpreter
        lines += ["  " + line for line in d.findings.details()] if d.tflm_present else \
            ["  " + d.findings.stuck_note] if d.findings.stuck_note else []
    elif d.why_no_verdict:
        lines.append(f"  no arena verdict: {d.why_no_verdict}")
    return lines


def fault_report(d) -> list[str]:
    """`arena fault`'s lines for Diagnosis d, with or without a fault."""
    return fault_lines(d) if d.fault is not None else no_fault_lines(d)


def fault_lines(d) -> list[str]:
    """`arena fault`'s report of Diagnosis d (with a fault): the verdicts first, then the evidence
    (registers, bits, frame)."""
    f = d.fault
    out = [style.paint(f"{f.exception or 'fault (exception unknown)'}: from {f.source}", "title")]
    # The answer first: the verdicts, then the evidence.
    for i, v in enumerate(d.verdicts):
        out.append("  " + (v.headline if i == 0 else v.headline.replace("VERDICT: ", "VERDICT (also): ", 1)))
    out += ["  " + line for line in f.port.report_lines(f)]
    if f.frame:
        out += ["  " + line for line in f.port.frame_lines(f)]
        out.append(f"  faulting PC: {d.pc_where}")
        if d.access:
            out.append(f"  {d.access}")
        out += [f"  {f.port.return_register.upper() + ':':<12} {d.lr[0]}"] + ["  " + line for line in d.lr[1:]]
        out += ["  " + line for line in d.frame_damage]
    if f.frame_note:
        out.append("  " + f.frame_note)
    out += ["  " + (c if c.startswith("note:") else "cause: " + c) for c in f.cause_lines()]
    if d.stuck_loop:
        out.append("  " + d.stuck_loop)
    if f.stale and d.arena_present:
        out.append("  the arena and the stack in memory are this boot's (re-filled and re-painted at reset): "
                   "only the registers and the frame above are the fault's")
        out += ["  " + d.stale_address] if d.stale_address else []
    elif d.subject:
        out += ["  " + line for line in d.findings.details()]
    else:
        out.append(f"  no arena verdict: {d.why_no_verdict}")
    return out


def kernels_line(ctx) -> list[str]:
    """Agentless: which TFLM kernels (and CMSIS-NN's CPU) the planner's figures and names assume,
    and how they were found (decode/kernels.py: the ELF, or `set arena kernels` / `set arena cpu`)."""
    build = ctx.kernels
    if ctx.desc is None or not ctx.desc.agentless or build is None:
        return []
    return [f"{build.describe()}, as the planner assumed ({build.evidence})"]


def info_report(ctx) -> list:
    """`arena info` (and `arenascope info`): the version, TFLM's condition, then the figures; peak
    and headroom are left out of an arena TFLM never finished laying out (they measure nothing)."""
    lines = render.info_lines(ctx.desc, ctx.figs, ctx.stack, ctx.located_by, kernels_line(ctx))
    if ctx.tflm is not None and not ctx.tflm.laid_out:
        lines = [f"  headroom:               {ctx.tflm.unmeasured}" if line.startswith("  headroom:")
                 else line
                 for line in lines if not line.startswith("  peak:")]
    elif ctx.tflm is not None and ctx.tflm.unmeasured:
        unknown = ("  tail (persistent):", "  used:", "  head (planned):", "  temp high-water:", "  headroom:")
        lines = [line[:26] + ctx.tflm.unmeasured if line.startswith(unknown) else line
                 for line in lines if not line.startswith("  peak:")]
    return [style.paint(f"arenascope {version.VERSION}", "title")] + tflm_state_lines(ctx) + lines


def check_report(ctx, result) -> list:
    """`arena check`'s lines for the checks `result` (pipeline.checks_of)."""
    out = []
    if ctx.desc is not None and ctx.desc.agentless:
        out.append("arena check: agentless mode (TFLM's own figures): the canary and guard bands, the invoke counter "
                   "and the fault record need the arenascope agent and are not checked")
    return out + render.check_lines(result)
