"""`arena regions`: the region table."""
from arenascope_plugin import pipeline
from arenascope_plugin.analyse import diagnosis
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import jsonout, render


class RegionsCommand(Sub):
    """List the regions as a table, sorted by address, size or lifetime.
Columns: index, id, kind, offset, address, size, first/last use, flags, name/shape/type
(when the model gives them); OVERWRITTEN before the name when the region holds bytes found
overwritten (`arena fault`'s findings: a changed checksum, an object of TFLM's overwritten).

Usage: arena regions [--sort address|size|lifetime] [--json]
--json: each arena's regions as the snapshot's region objects, in the same order."""
    sub = "regions"
    json_doc = True

    def add_arguments(self, parser):
        parser.add_argument("--sort", choices=sorted(render.SORT_KEYS), default="address")

    def run(self, args):
        ctx = framework.gather()
        if args.json:
            framework.emit(jsonout.regions(pipeline.snapshot(ctx, with_fault=False), ctx.desc, args.sort))
        else:
            write(render.region_table(ctx.desc, args.sort, diagnosis.diagnose(ctx).overwritten_regions(ctx.desc)))
