"""`arena info`: the arena's figures, one per line."""
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import reports


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
        write(reports.info_report(ctx))
