"""`arena map`: the arena as a text bar, a legend and the regions by address."""
from arenascope_plugin import pipeline
from arenascope_plugin.analyse import diagnosis
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.gdb.options import width
from arenascope_plugin.present import jsonout, render


class MapCommand(Sub):
    """Draw the arena as a text bar, with a legend and the regions by address.
The bar shows the head, temp, free band, persistent tail, guard band and canary damage.

Usage: arena map [--width N] [--json]    (N cells, default 64)
--json: what the bar draws, each arena as the snapshot's arena object (figures, free band,
damage, regions) and the guard band (docs/command-json-schema.json)."""
    sub = "map"
    json_doc = True

    def add_arguments(self, parser):
        parser.add_argument("--width", type=width, default=64, metavar="N", help="cells in the bar (16..400)")

    def run(self, args):
        ctx = framework.gather(verify=True)
        if args.json:
            framework.emit(jsonout.map_doc(pipeline.snapshot(ctx, with_fault=False)))
        else:
            damaged = diagnosis.diagnose(ctx).overwritten_regions(ctx.desc)
            write(render.map_lines(ctx.desc, ctx.figs, args.width, damaged))
