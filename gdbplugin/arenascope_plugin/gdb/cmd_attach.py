"""`arena attach EXPR`: agentless mode on a named tflite::MicroInterpreter."""
import gdb  # pylint: disable=import-error

from arenascope_plugin.acquire.gdbtarget import GdbSymbols, eval_read_only
from arenascope_plugin.analyse import agentless
from arenascope_plugin.decode import tflm
from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.settings_table import SIDE_EFFECT


def attach(expr):
    """The interpreter EXPR names (an object, a reference or a pointer to one, or an address),
    remembered for this inferior. Checked before it is kept: its graph's vtable pointer must be
    MicroInterpreterGraph's. Never evaluates what could write memory or call the target."""
    if SIDE_EFFECT.search(expr):
        raise TargetError(f"refusing {expr!r}: it could write target memory or call a target function, and "
                          "arenascope only reads; give the interpreter variable, a pointer to it, or its address")
    try:
        v = eval_read_only(expr)
    except gdb.error as e:
        raise TargetError(f"cannot evaluate '{expr}': {e}") from None
    t = v.type.strip_typedefs()
    if t.code == gdb.TYPE_CODE_REF:
        v, t = v.referenced_value(), t.target().strip_typedefs()
    if t.code == gdb.TYPE_CODE_PTR:
        target = t.target().strip_typedefs()
        if target.code != gdb.TYPE_CODE_VOID and target.name != "tflite::MicroInterpreter":
            raise TargetError(f"'{expr}' is a {t}, not a pointer to a tflite::MicroInterpreter")
        address = int(v)
    elif t.code == gdb.TYPE_CODE_STRUCT:
        if t.name != "tflite::MicroInterpreter":
            raise TargetError(f"'{expr}' is a {t}, not a tflite::MicroInterpreter")
        address = int(v.address)
    elif t.code == gdb.TYPE_CODE_INT and not expr.strip()[:1].isalpha():
        address = int(v)  # a number or arithmetic: an address, checked below
    else:
        raise TargetError(f"'{expr}' is a {t}, not a tflite::MicroInterpreter or a pointer to one")
    symbols = GdbSymbols()
    agentless.require_tflm(symbols, "arena attach")
    agentless.check_interpreter(framework.reader(), symbols, tflm.layout(symbols), address, expr)
    framework.set_attached(address)
    return address


class AttachCommand(Sub):
    """Read an unmodified TFLM firmware with no agent: name its MicroInterpreter.
Agentless mode walks TFLM's own objects (the arena allocator's head/temp/tail, the tensors'
data pointers, the scratch buffer handles) from the firmware's DWARF, with lifetimes from the
model (read from the ELF, planned by arenascope-plan). Without `arena attach` the plugin finds
an interpreter by scanning RAM for its MicroInterpreterGraph vtable pointer.

Usage: arena attach EXPR              a tflite::MicroInterpreter, or a pointer to one
       arena attach --interpreter N   the Nth of `arena interpreters` (several in one firmware)
       arena attach --clear           forget it (find the descriptor, or scan, again)"""
    sub = "attach"

    def add_arguments(self, parser):
        parser.add_argument("expr", nargs="*", metavar="EXPR", help="a tflite::MicroInterpreter or a pointer to one")
        parser.add_argument("--clear", action="store_true", help="forget the attached interpreter")
        parser.add_argument("--interpreter", type=int, metavar="N", help="the Nth of `arena interpreters`")

    def run(self, args):
        if args.interpreter is not None:
            if args.expr or args.clear:
                raise TargetError("arena attach: --interpreter N, an expression or --clear, one at a time")
            symbols = GdbSymbols()
            agentless.require_tflm(symbols, "arena attach")
            found = agentless.scan_interpreters(framework.reader(), symbols, tflm.layout(symbols))
            if not 0 <= args.interpreter < len(found):
                raise TargetError(f"--interpreter {args.interpreter}: the firmware's RAM holds "
                                  f"{len(found)} MicroInterpreter(s), numbered from 0 (`arena interpreters` lists "
                                  "them)")
            address = attach(f"{found[args.interpreter]:#x}")
            write([f"arena attach: interpreter {args.interpreter}, the MicroInterpreter at {address:#x}; arena "
                   "commands read it until `arena attach --clear`"])
            return
        if args.clear:
            framework.set_attached(None)
            write(["arena attach: forgotten; commands look for the agent's descriptor again"])
            return
        if not args.expr:
            raise TargetError("arena attach needs an expression: a tflite::MicroInterpreter or a pointer to one")
        address = attach(" ".join(args.expr))
        write([f"arena attach: the MicroInterpreter at {address:#x}; arena commands read TFLM's own objects "
                "(agentless mode) until `arena attach --clear`"])
