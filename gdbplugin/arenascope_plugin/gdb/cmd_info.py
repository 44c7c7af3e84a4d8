"""`arena info`: the arena's figures, one per line."""
from arenascope_plugin import version
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import render, reports, style


class InfoCommand(Sub):
    """Print the arena's figures, one per line, units shown.
Size, head, temp, tail, used, peak, canary-intact bytes, headroom, stack bounds, SP,
high-water mark, peak depth and the stack rule.

Usage: arena info
Units are bytes unless shown. Headroom is an upper estimate until the planner tool gives the
model's minimum arena (TFLM needs more than arena_used_bytes() while it allocates)."""
    sub = "info"

    def run(self, args):
        ctx = framework.gather()
        write([style.paint(f"arenascope {version.VERSION}", "title")])
        write(reports.tflm_state_lines(ctx))
        lines = render.info_lines(ctx.desc, ctx.figs, ctx.stack, ctx.located_by)
        if ctx.tflm is not None and not ctx.tflm.laid_out:
            # Peak and headroom of an arena TFLM never finished laying out measure nothing.
            lines = [("  headroom:               not measured: AllocateTensors did not finish (`arena fault` gives "
                      "the shortfall)") if line.startswith("  headroom:") else line
                     for line in lines if not line.startswith("  peak:")]
        write(lines)
