"""`arena whereis ADDR`: what owns an address."""
import argparse

import gdb  # pylint: disable=import-error

from arenascope_plugin.acquire.gdbtarget import parse_address
from arenascope_plugin.analyse import figures
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import ArgError, Sub, write


class WhereisCommand(Sub):
    """Say which region, tensor or area owns an address.
Or that it is free, in the guard band, on the stack, or outside. Expressions that could
write memory or call a function are refused.

Usage: arena whereis ADDR    (a number, symbol or expression)"""
    sub = "whereis"

    def complete(self, text, word):
        return gdb.COMPLETE_EXPRESSION

    def parse(self, arg):
        if not arg.strip():
            raise ArgError("give an address: a number, a symbol or an expression (see `help arena whereis`)")
        return argparse.Namespace(address=arg.strip())  # the expression as typed: GDB quoting kept

    def run(self, args):
        addr = parse_address(args.address)
        ctx = framework.gather(verify=True)
        write(figures.whereis(ctx.desc, addr, ctx.stack))
