"""`arena whereis ADDR`: what owns an address."""
import argparse

from arenascope_plugin.acquire.gdbtarget import parse_address
from arenascope_plugin.analyse import diagnosis, figures
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import ArgError, Sub, write
from arenascope_plugin.present import jsonout


class WhereisCommand(Sub):
    """Say which region, tensor or area owns an address.
Or that it is free, in the guard band, on the stack, or outside; and whether it lies in something
found overwritten (a region whose checksum changed, an object of TFLM's the stack or a wild write
overwrote: `arena fault`'s findings). Expressions that could write memory or call a function are
refused.

Usage: arena whereis ADDR [--json]    (a number, symbol or expression)
--json: {"address", "arenas": [{arena, offset, area, regions}], "guard_offset", "stack",
"descriptor_offset", "overwritten": [{what, addr, size_bytes, why}]}
(docs/command-json-schema.json); regions are indices into `arena regions`."""
    sub = "whereis"
    json_doc = True

    def add_arguments(self, parser):  # for completion and help; parse() keeps the expression as typed
        parser.add_argument("address", metavar="ADDR")

    def parse(self, arg):
        words = arg.split()
        as_json = bool(words) and "--json" in (words[0], words[-1])
        text = arg.strip()
        if as_json:  # --json first or last; the rest is the expression as typed (GDB quoting kept)
            text = text[len("--json"):] if words[0] == "--json" else text[:-len("--json")]
            text = text.strip()
        if not text:
            raise ArgError("give an address: a number, a symbol or an expression (see `help arena whereis`)")
        return argparse.Namespace(address=text, json=as_json)

    def run(self, args):
        addr = parse_address(args.address)
        ctx = framework.gather(verify=True)
        d = diagnosis.diagnose(ctx)
        if args.json:
            framework.emit(jsonout.whereis(figures.where(ctx.desc, addr, ctx.stack, ctx.symbols.memory_spans()),
                                           [o for o in d.overwritten if o[0] <= addr < o[0] + o[1]]))
        else:
            write(figures.whereis(ctx.desc, addr, ctx.stack, ctx.symbols.memory_spans()) + d.overwritten_at(addr))
