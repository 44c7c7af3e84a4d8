"""`arena stack`: bounds, paint, high-water mark (with or without the agent)."""
import gdb  # pylint: disable=import-error

from arenascope_plugin import stackbudget_job
from arenascope_plugin.analyse import diagnosis, verdicts
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import jsonout, render, snapshot, stackbudget
from arenascope_plugin.present import tasks as task_text


class StackCommand(Sub):
    """Show the stack: bounds, paint, high-water mark, peak depth and the stack rule.
Scanned from target memory when it runs. Bounds: the descriptor, else the linker symbols
(__StackLimit/__StackTop, _sstack/_estack, ...), else `set arena stack-range LOW HIGH`.
With FreeRTOS (found from the ELF's DWARF, no agent needed): every task's stack too, one row a
task (state, priority, bounds, peak, bytes never used, SP), from its TCB and its 0xA5 fill, and
the stack rule for a task whose stack sits right above an arena.

Then the stack's worst case worked out from the ELF's code (`arena budget`), what makes it a floor
if it is one, and how close the measured peak came to it.

Usage: arena stack [--json]
--json: the snapshot's stack object (and its tasks with FreeRTOS) as one JSON document."""
    sub = "stack"
    json_doc = True

    def run(self, args):
        ctx = framework.gather(need_descriptor=False, verify=True)
        if args.json:
            framework.emit(jsonout.stack(ctx.stack, snapshot.tasks_json(ctx.kernel, ctx.tasks)
                                         if ctx.kernel is not None else None))
            return
        if ctx.desc is None:
            gdb.write(f"arena stack: no arena to measure against ({ctx.note})\n"
                      f"stack bounds from {ctx.stack_source}, high-water mark scanned from memory\n")
        live = next((ts for ts in ctx.tasks if ts.sp_live), None)
        v = next((v for v in diagnosis.diagnose(ctx).tflm_verdicts if v.kind == verdicts.STACK_INTO_ARENA), None) \
            if ctx.tflm is not None and ctx.tflm.interpreter else None
        write(render.stack_lines(ctx.stack, indent="", sp_owner=f"{live.stack_name} ({ctx.port.thread_stack_phrase})"
                                 if live is not None else None,
                                 reach=v.reach if v is not None else None))
        write(stackbudget.measured_lines(stackbudget_job.predicted(ctx.symbols.elf_path), ctx.stack.peak))
        write(task_text.lines(ctx.kernel, ctx.tasks))
        if ctx.tflm is not None and ctx.tflm.interpreter:
            if v is not None:
                lines = v.lines()
                write(lines[:1] + ["  " + line for line in lines[1:]])
