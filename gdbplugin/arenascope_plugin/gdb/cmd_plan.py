"""`arena plan`: the memory plan over operator index (a target's, a model file's, a snapshot's)."""
import os

from arenascope_plugin.acquire import planner
from arenascope_plugin.acquire.gdbtarget import batch_mode
from arenascope_plugin.analyse import figures
from arenascope_plugin.decode import plan
from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import framework, settings
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.gdb.options import margin, width
from arenascope_plugin.present import budget, render, snapshot, style


class PlanCommand(Sub):
    """Chart the memory plan over operator index, with live bytes and the lower bound.
One row per allocation scope: the live bytes, a bar of the live tensors and scratch buffers
over the head, and the lower bound marked.

Usage: arena plan [--width N] [--model FILE.tflite [--target cortex-m|host] [--margin PCT]
                  | --snapshot FILE.json]
Scopes follow TFLM: model inputs live from scope 0, operator i runs in scope i+1.
--model charts a model file's plan instead, with no target: TFLM's greedy plan as the planner
tool arenascope-plan predicts it (`set arena planner-path`; docs/arena-budget.md), with its
arena figures for --target (struct sizes of a Cortex-M, default, or of x86-64) and the
recommendation with --margin percent (default 10).
--snapshot charts the plan saved in a snapshot file (`arena snapshot`, or
`arenascope-plan --snapshot`), no target needed."""
    sub = "plan"
    options = ("--width", "--model", "--snapshot", "--target", "--margin")

    def add_arguments(self, parser):
        parser.add_argument("--width", type=width, default=64, help="cells in the bar (16..400)")
        parser.add_argument("--model", help="a .tflite file: chart its predicted plan, no target needed")
        parser.add_argument("--target", choices=("cortex-m", "host"), help="with --model: the ABI (default cortex-m)")
        parser.add_argument("--margin", type=margin, help="with --model: percent added for the recommendation "
                                                            "(0..100, default 10)")
        parser.add_argument("--snapshot", help="a snapshot file: chart the plan it holds, no target needed")

    def run(self, args):
        if args.snapshot is not None and args.model is not None:
            raise TargetError("--model or --snapshot, not both")
        if args.model is None and (args.target is not None or args.margin is not None):
            raise TargetError("--target and --margin go with --model FILE.tflite (a target's own plan has its own ABI "
                              "and arena)")
        if args.snapshot is not None:
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
            return
        if args.model is not None:
            if not args.model.strip():
                raise TargetError("--model needs a .tflite file")
            path = os.path.expanduser(args.model)
            if os.path.exists(path) and not os.path.isfile(path):
                raise TargetError(f"{path} is not a regular file: give a .tflite model file")
            try:
                tool = settings.tool_path("planner-path", "planner", "arenascope-plan")
                doc, rejected = planner.run_planner(tool, path, args.target or "cortex-m", args.margin)
                a = plan.arena_from_plan(doc)
                words = budget.arena_lines(doc)
            except planner.PlannerError as e:
                raise TargetError(str(e)) from None
            lines = [f"{path}: predicted by arenascope-plan (no target), TFLM's greedy plan"]
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
            if message and batch_mode():
                raise TargetError(message)  # gdb -batch exits non-zero, as the tool does
            return
        ctx = framework.gather()
        if not ctx.desc.arenas:
            write([render.NO_ARENA])
        for a in ctx.desc.arenas:
            write(render.plan_lines(a, figures.plan(a), args.width))
