"""`arena fault`: the last fault decoded, and whether the stack or the arena did it."""
import gdb  # pylint: disable=import-error

from arenascope_plugin import ports
from arenascope_plugin.analyse import diagnosis
from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.gdb.settings import Spec, check_expression
from arenascope_plugin.present import jsonout, textreports

SETTINGS = [
    Spec("fault-sp", gdb.PARAM_STRING, "auto",
         "Where the fault handler saved the stack pointer at the fault (an expression: a variable, or an "
         "address), for `arena fault` when the core is halted inside the handler and LR no longer holds "
         "EXC_RETURN; 'auto' tries the common names ("
         + ", ".join(s for p in ports.all_ports() for s in p.fault_sp_symbols) + ").",
         "the fault handler's saved stack pointer", check_expression),
]


class FaultCommand(Sub):
    """Decode the last fault and say whether the stack or the arena did it.
Works halted in a fault handler (with or without the agent: registers from the core) and after
a reset (from the agent's fault record, which survives warm resets). Prints every set bit of
CFSR and HFSR with its meaning, MMFAR/BFAR when valid, the stacked frame chosen by EXC_RETURN,
the faulting PC and LR as function and file:line, then the verdict from the arena's point of
view: the stack against the guard band and the arena, the persistent regions overwritten since
allocation (the agent's checksums), canary damage, where the faulting address is.

Usage: arena fault [--json]
--json: the snapshot's fault object (null when there is none, with why in "note"), and the
verdicts and notes whether or not there was a fault ("verdict": FAIL when there is one)."""
    sub = "fault"
    json_doc = True

    def run(self, args):
        framework.check_readable()
        try:
            ctx = framework.gather(need_descriptor=False, verify=True)
        except ArenascopeError as exc:
            ctx = framework.new_context()
            ctx.note = str(exc)
        d = diagnosis.diagnose(ctx)
        if args.json:
            framework.emit(jsonout.fault(d))
            return
        write(textreports.fault_report(d))
