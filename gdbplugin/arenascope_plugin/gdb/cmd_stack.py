"""`arena stack`: bounds, paint, high-water mark (with or without the agent)."""
import gdb  # pylint: disable=import-error

from arenascope_plugin.analyse import postmortem
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import render


class StackCommand(Sub):
    """Show the stack: bounds, paint, high-water mark, peak depth and the stack rule.
Scanned from target memory when it runs. Bounds: the descriptor, else the linker symbols
(__StackLimit/__StackTop, _sstack/_estack, ...), else `set arena stack-range LOW HIGH`.

Usage: arena stack"""
    sub = "stack"

    def run(self, args):
        ctx = framework.gather(need_descriptor=False, verify=True)
        if ctx.desc is None:
            gdb.write(f"{ctx.note}: stack bounds from {ctx.stack_source}, high-water mark scanned from memory\n")
        write(render.stack_lines(ctx.stack, indent=""))
        if ctx.tflm is not None and ctx.tflm.interpreter:
            v = postmortem.stack_into_arena(ctx.reader, ctx.facts, ctx.tflm, ctx.stack, None, ctx.plan)
            if v is not None:
                lines = v.lines()
                write(lines[:1] + ["  " + line for line in lines[1:]])
