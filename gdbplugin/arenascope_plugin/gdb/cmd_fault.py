"""`arena fault`: the last fault decoded, and whether the stack or the arena did it."""
from arenascope_plugin.analyse import diagnosis
from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import jsonout, textreports


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
