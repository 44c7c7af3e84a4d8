"""`arena plan`: the memory plan over operator index (a target's, a model file's, a snapshot's)."""
import argparse
import os

from arenascope_plugin import pipeline, ports
from arenascope_plugin.acquire import planner
from arenascope_plugin.acquire.gdbtarget import GdbSymbols, batch_mode
from arenascope_plugin.analyse import figures
from arenascope_plugin.decode import kernels, plan, tflm, tflm_profile
from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import framework, settings
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.gdb.options import margin, width
from arenascope_plugin.present import budget, jsonout, render, snapshot, style


def _model_tflm(args) -> tuple[str, str]:
    """(era id, how it was chosen) for `arena plan --model`: --tflm, else the loaded ELF's TFLM
    era (decode/tflm_profile.py), else the newest. --tflm other than the loaded ELF's era is
    said so."""
    symbols = GdbSymbols()
    loaded = None
    if symbols.elf_path:
        try:
            loaded = tflm.era_of(symbols).id
        except TargetError:
            pass
    if args.tflm:
        return args.tflm, "--tflm" + (f"; the loaded ELF links TFLM {loaded}, not this one" if loaded and
                                      loaded != args.tflm else "")
    if loaded:
        return loaded, "the loaded ELF's TFLM"
    return tflm_profile.NEWEST.id, "no --tflm and no TFLM in a loaded ELF: the newest"


def _cpu(text):
    problem = kernels.check_cpu(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def _model_build(args) -> kernels.KernelBuild:
    """The kernels for `arena plan --model`: the options, else the settings, else the loaded ELF."""
    kernel_set = args.kernels or settings.setting("kernels")
    cpu = args.cpu or settings.setting("cpu")
    if args.kernels:
        how = "--kernels"
    elif kernel_set != "auto":
        how = "set arena kernels"
    else:
        symbols = GdbSymbols()
        if not symbols.elf_path:
            kernel_set, how = "reference", "no --kernels and no ELF loaded"
        else:
            found = kernels.detect(symbols, "auto", cpu)
            if found.kernels != "cmsis-nn" and args.cpu:
                raise TargetError(f"--cpu goes with CMSIS-NN kernels, and {found.evidence}: give --kernels cmsis-nn "
                                  "to plan them anyway")
            return kernels.KernelBuild(found.kernels, found.cpu, found.evidence)
    if kernel_set != "cmsis-nn":
        if args.cpu:  # as arenascope-plan: the reference kernels allocate the same on every CPU
            raise TargetError(f"--cpu goes with --kernels cmsis-nn ({how}: reference kernels, which allocate the "
                              "same on every CPU)")
        if cpu != "auto":
            how += f"; set arena cpu {cpu} does not apply to them"
        return kernels.KernelBuild(kernel_set, None, how)
    if cpu == "auto":
        return kernels.KernelBuild(kernel_set, "cortex-m4", f"{how}; cortex-m4, the default --cpu")
    where = "--cpu" if args.cpu else "set arena cpu"
    return kernels.KernelBuild(kernel_set, kernels.canonical_cpu(cpu), f"{how}, {where}")


class PlanCommand(Sub):
    """Chart the memory plan over operator index, with live bytes and the lower bound.
One row per allocation scope: the live bytes, a bar of the live tensors and scratch buffers
over the head, and the lower bound marked.

Usage: arena plan [--width N] [--model FILE.tflite [--target cortex-m|riscv32|xtensa|host] [--margin PCT]
                  [--kernels reference|cmsis-nn] [--cpu CPU] [--tflm ERA] | --snapshot FILE.json]
Scopes follow TFLM: model inputs live from scope 0, operator i runs in scope i+1.
On a target, below the chart: how many regions the model's own offline plan places, and, when
the planner finds a smaller plan for the model the arena runs (agentless, or the model an
agent's arena publishes), how many bytes of head it saves and the arenascope-plan
--write-offline-plan command that writes it into the model (docs/offline-plan.md).
--model charts a model file's plan instead, with no target: TFLM's greedy plan as the planner
tool arenascope-plan predicts it (`set arena planner-path`; docs/arena-budget.md), the saving a
better plan gives (docs/offline-plan.md), with its
arena figures for --target (the struct sizes of an ABI: default the loaded ELF's architecture,
else cortex-m; riscv32's and xtensa's 4-byte enums make TfLiteTensor 40 B, not 32) and the
recommendation with --margin percent (default 10), for the kernels --kernels names (default
`set arena kernels`, else the loaded ELF's, else reference) and, with cmsis-nn, the core --cpu
names (cortex-m0 ... cortex-m85 with gcc's +nodsp/+nomve; default `set arena cpu`, else the
loaded ELF's build attributes, else cortex-m4; docs/cmsis-nn.md), replaying the allocations of
the TFLM era --tflm names (2026-08, 2023-02, 2022-09, 2022-07, 2022-03: `arena version` lists them;
default the loaded ELF's TFLM, else the newest; docs/integrating-tflm.md, "Every TFLM era").
--snapshot charts the plan saved in a snapshot file (`arena snapshot`, or
`arenascope-plan --snapshot`), no target needed.
--json (on a target): each arena's plan as the snapshot's "plan" object (scopes, live bytes,
lower bound); a model's plan as JSON is `arenascope-plan --json FILE.tflite`."""
    sub = "plan"
    json_doc = True

    def add_arguments(self, parser):
        parser.add_argument("--width", type=width, default=64, metavar="N", help="cells in the bar (16..400)")
        parser.add_argument("--model", metavar="FILE.tflite",
                            help="a .tflite file: chart its predicted plan, no target needed")
        parser.add_argument("--target", choices=("cortex-m", "riscv32", "xtensa", "host"),
                            help="with --model: the ABI (default: the loaded ELF's, else cortex-m)")
        parser.add_argument("--margin", type=margin, help="with --model: percent added for the recommendation "
                                                            "(0..100, default 10)")
        parser.add_argument("--snapshot", metavar="FILE.json",
                            help="a snapshot file: chart the plan it holds, no target needed")
        parser.add_argument("--kernels", choices=kernels.KERNEL_SETS, help="with --model: the TFLM kernels")
        parser.add_argument("--tflm", choices=[e.id for e in tflm_profile.ERAS],
                            help="with --model: the TFLM era whose allocations the planner replays (default: the "
                            "loaded ELF's, else the newest)")
        parser.add_argument("--cpu", type=_cpu,
                            help="with --model and cmsis-nn kernels: the core, e.g. cortex-m55")

    def run(self, args):
        _check_options(args)
        if args.snapshot is not None:
            _chart_snapshot(args)
        elif args.model is not None:
            _chart_model(args)
        else:
            _chart_target(args)


def _check_options(args):
    """TargetError when the options do not go together."""
    if args.json and (args.snapshot is not None or args.model is not None):
        raise TargetError("--json charts a target's plan; for a model's: arenascope-plan --json FILE.tflite; a "
                          "snapshot's plan is its arenas[].plan")
    if args.snapshot is not None and args.model is not None:
        raise TargetError("--model or --snapshot, not both")
    if args.model is None and any(v is not None for v in (args.target, args.margin, args.kernels, args.cpu,
                                                          args.tflm)):
        raise TargetError("--target, --margin, --kernels, --cpu and --tflm go with --model FILE.tflite (a "
                          "target's own plan has its own ABI, kernels, TFLM and arena)")


def _chart_snapshot(args):
    """`arena plan --snapshot FILE`: what the file holds, its WARN and FAIL checks, its plans."""
    path = os.path.expanduser(args.snapshot)
    try:
        doc = snapshot.load_snapshot_file(path)
        arenas = snapshot.arenas_from_snapshot(doc)
    except snapshot.SnapshotError as e:
        raise TargetError(f"{path}: {e}" if not str(e).startswith(("cannot read", path)) else str(e)) from None
    src = doc["source"]
    what = (f"model {src.get('model')}, predicted by arenascope-plan for {src.get('target')}"
            if src.get("located_by") == "model"
            else f"snapshot of {src.get('elf') or 'a target'} at {src.get('time')}")
    write([f"{path}: {what}"])
    for c in doc.get("checks") if isinstance(doc.get("checks"), list) else []:
        if isinstance(c, dict) and c.get("verdict") in ("WARN", "FAIL"):
            write([style.paint(f"{c['verdict']}  {c.get('rule')}: {c.get('reason')}", c["verdict"])])
    if not arenas:
        write([render.NO_ARENA])
    for a in arenas:
        write(render.plan_lines(a, figures.plan(a), args.width))


def _model_path(args) -> str:
    """--model's file, its ~ expanded; TargetError when it is no file name or not a regular file."""
    if not args.model.strip():
        raise TargetError("--model needs a .tflite file")
    path = os.path.expanduser(args.model)
    if os.path.exists(path) and not os.path.isfile(path):
        raise TargetError(f"{path} is not a regular file: give a .tflite model file")
    return path


def _chart_model(args):
    """`arena plan --model FILE`: the planner's prediction of the model's plan, its arena figures
    and the saving a better plan gives; in gdb -batch, TargetError when TFLM would reject it."""
    path = _model_path(args)
    try:
        tool = settings.tool_path("planner-path", "planner", "arenascope-plan")
        build = _model_build(args)
        era, era_how = _model_tflm(args)
        doc, rejected = planner.run_planner(tool, path, args.target or _elf_target(), args.margin,
                                            build_args=[*build.planner_args(), "--tflm", era])
        a = plan.arena_from_plan(doc)
        words = budget.arena_lines(doc)
    except planner.PlannerError as e:
        raise TargetError(str(e)) from None
    lines = [f"{path}: predicted by arenascope-plan (no target), TFLM's greedy plan with "
             f"{build.describe()} ({build.evidence}), as TFLM {era} allocates ({era_how})"]
    message = None
    if rejected:
        reason = planner.printable(doc["tflm_rejects"][0]) if doc.get("tflm_rejects") else rejected
        message = f"TFLM would reject this model: {reason}"
        lines.append(style.paint(message + " (its plan is charted all the same)", "FAIL"))
    if doc["approximate"]:
        lines.append(style.paint("APPROXIMATE: the scratch of " +
                                 planner.printable("; ".join(doc["unmodelled_scratch"])) +
                                 " is not modelled; the figures below leave it out", "WARN"))
    # What limits the figures comes first, before the chart: a FLOOR as the others.
    lines += [style.paint(line, "WARN") for line in words if "FLOOR" in line]
    write(lines + render.plan_lines(a, figures.plan(a), args.width))
    write([line for line in words if "FLOOR" not in line])
    try:
        write(budget.saving_lines(a, doc, path))
    except planner.PlannerError as e:
        raise TargetError(str(e)) from None
    if message and batch_mode():
        raise TargetError(message)  # gdb -batch exits non-zero, as the tool does


def _chart_target(args):
    """`arena plan` on the target: each arena's plan and the saving a better plan gives (--json:
    the plans as JSON)."""
    ctx = framework.gather()
    if args.json:
        framework.emit(jsonout.plan(pipeline.snapshot(ctx, with_fault=False)))
        return
    if not ctx.desc.arenas:
        write([render.NO_ARENA])
    for a in ctx.desc.arenas:
        write(render.plan_lines(a, figures.plan(a), args.width))
        try:  # no model known: no saving to speak of
            write(budget.saving_lines(a, pipeline.model_plan(ctx, a), ctx.settings.model or None))
        except planner.PlannerError as e:
            framework.say_warning("plan-saving", str(e))


def _elf_target() -> str:
    """The planner's --target for the loaded ELF's architecture (its port), else cortex-m."""
    try:
        port = ports.for_abi(GdbSymbols().abi())
    except (RuntimeError, TargetError, OSError):  # gdb.error is a RuntimeError
        port = None
    return port.planner_target if port is not None else "cortex-m"
