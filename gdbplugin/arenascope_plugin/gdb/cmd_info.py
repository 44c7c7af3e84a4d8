"""`arena info`: the arena's figures, one per line."""
from arenascope_plugin import pipeline
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import jsonout, textreports


class InfoCommand(Sub):
    """Print the arena's figures, one per line, units shown.
Size, head, temp, tail, used, peak, canary-intact bytes, headroom, stack bounds, SP,
high-water mark, peak depth and the stack rule.

Usage: arena info [--json]
--json: the snapshot's source, state, arenas, stack and guard as one JSON document.
Units are bytes unless shown. Headroom is an upper estimate until the planner tool gives the
model's minimum arena (TFLM needs more than arena_used_bytes() while it allocates)."""
    sub = "info"
    json_doc = True

    def run(self, args):
        ctx = framework.gather()
        if args.json:
            framework.emit(jsonout.info(pipeline.snapshot(ctx, with_fault=False)))
        else:
            write(textreports.info_report(ctx))
