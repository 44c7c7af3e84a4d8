"""`arena budget`: before flashing, from the loaded ELF alone (no target needed): the stack's worst
case from the code, the RAM map and the 1.5 x stack rule (stackbudget_job, docs/stack-budget.md)."""
import os

from arenascope_plugin import stackbudget_job
from arenascope_plugin.acquire.gdbtarget import GdbSymbols
from arenascope_plugin.acquire.planner import PlannerError
from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import settings
from arenascope_plugin.gdb.framework import Sub, write


class BudgetCommand(Sub):
    """Say, before flashing, whether the stack can reach the arena.
From the loaded ELF alone, no target needed: every function's frame (GCC's .su files, else the
ELF's .debug_frame, else its prologue), the call graph decoded from the code, the deepest path
from Reset and from each exception handler (plus what the core stacks on entry), and where the
linker put the arena and the stack. The stack rule: the room from the stack's top to the arena's
end is at least 1.5 x the stack's worst case. A recursion, an indirect call with no known target
or a frame not known makes the worst case a floor, and is named.

Usage: arena budget [--model FILE.tflite | --arena-bytes N] [--su FILE.su|DIR ...] [--arena SYMBOL]
                    [--calls CALLER=CALLEE,...] [--bound FUNCTION=LEVELS]
--model: the planner's minimum arena for the model, and its verdict on the arena in the ELF;
--arena: the arena's array when its name does not hold "arena";
--calls: where CALLER's calls through pointers go, when you know better than the ELF says;
--bound: how deep a recursion through FUNCTION can go (repeat either)."""
    sub = "budget"

    def add_arguments(self, parser):
        parser.add_argument("--model", metavar="FILE.tflite", help="the model the firmware runs")
        parser.add_argument("--arena-bytes", type=int, metavar="N", help="the arena the model needs")
        parser.add_argument("--su", action="append", default=[], metavar="FILE.su",
                            help="GCC's -fstack-usage files (or a directory of them)")
        parser.add_argument("--arena", metavar="SYMBOL", help="the arena's array")
        parser.add_argument("--calls", action="append", default=[], metavar="CALLER=CALLEE[,CALLEE]",
                            help="the targets of CALLER's calls through pointers, when you know them")
        parser.add_argument("--bound", action="append", default=[], metavar="FUNCTION=LEVELS",
                            help="a recursion through FUNCTION goes at most LEVELS deep")

    def run(self, args):
        symbols = GdbSymbols()
        if not symbols.elf_path or not os.path.exists(symbols.elf_path):
            raise TargetError("no ELF loaded: `file fw.elf` first (no target is needed)")
        tool = settings.tool_path("planner-path", "planner", "arenascope-plan") if args.model else None
        try:
            answer = stackbudget_job.run(symbols.elf_path, symbols, stackbudget_job.su_files(args.su), args.arena,
                                         os.path.expanduser(args.model) if args.model else None, tool,
                                         args.arena_bytes, stackbudget_job.parse_calls(args.calls),
                                         stackbudget_job.parse_bounds(args.bound))
        except (ValueError, PlannerError) as exc:
            raise TargetError(str(exc)) from None
        write(answer.lines())
