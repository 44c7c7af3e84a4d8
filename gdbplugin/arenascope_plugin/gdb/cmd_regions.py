"""`arena regions`: the region table."""
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import render


class RegionsCommand(Sub):
    """List the regions as a table, sorted by address, size or lifetime.
Columns: index, id, kind, offset, address, size, first/last use, flags, name/shape/type
(when the model gives them).

Usage: arena regions [--sort address|size|lifetime]"""
    sub = "regions"
    options = ("--sort", "address", "size", "lifetime")

    def add_arguments(self, parser):
        parser.add_argument("--sort", choices=sorted(render.SORT_KEYS), default="address")

    def run(self, args):
        ctx = framework.gather()
        write(render.region_table(ctx.desc, args.sort))
