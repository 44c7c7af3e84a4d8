"""`arena map`: the arena as a text bar, a legend and the regions by address."""
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.gdb.options import width
from arenascope_plugin.present import render


class MapCommand(Sub):
    """Draw the arena as a text bar, with a legend and the regions by address.
The bar shows the head, temp, free band, persistent tail, guard band and canary damage.

Usage: arena map [--width N]    (N cells, default 64)"""
    sub = "map"
    options = ("--width",)

    def add_arguments(self, parser):
        parser.add_argument("--width", type=width, default=64, help="cells in the bar (16..400)")

    def run(self, args):
        ctx = framework.gather(verify=True)
        write(render.map_lines(ctx.desc, ctx.figs, args.width))
