"""GDB convenience functions for expressions and breakpoint conditions
(`break foo if $arena_stack_room() < 512`), each the figure an `arena` command prints, from the
same pipeline gather (read-only; docs/pretty-printers.md gives each one's cost):

  $arena_owner(ADDR)   string: what owns ADDR, `arena whereis ADDR`'s lines joined with "; "
  $arena_free([N])     int, bytes: arena N's free band, tail - max(head, temp) = size - used
                       (TFLM's arena_used_bytes(); `arena info`'s size minus its used)
  $arena_headroom([N]) int, bytes: `arena info`'s headroom of arena N = size - peak (peak: used,
                       raised by canary damage, or the planner's minimum arena when it holds)
  $arena_stack_room()  int, bytes: `arena stack`'s room to the arena's end minus its peak depth =
                       the stack's high-water mark - the end of the arena below the stack
N: the arena's index (default 0, the only one unless TFLM runs two-arena mode or the agent
publishes more). Errors are gdb.GdbError with one line "$NAME: what happened: what to do"."""
import gdb  # pylint: disable=import-error

from arenascope_plugin import pipeline
from arenascope_plugin.analyse import diagnosis, figures
from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.gdb import framework


def gather(need_descriptor=True, verify=False):
    """pipeline.gather as the commands run it (their target, settings, cache and warnings), after
    the commands' own check of the link (no target, a lost link: worded as `arena info` words
    it), less its running check: while GDB tests a breakpoint condition the thread counts as
    running, yet its memory and registers can be read."""
    framework.check_readable(in_condition=True)
    base = framework.new_context()
    # A breakpoint condition is tested at stops GDB reports to no one (no stop or cont event): the
    # target ran since the last one, so this stop's band scans (pipeline.STOP_SCANS) are neither
    # used nor kept: each test scans afresh.
    base.cache.pop(pipeline.STOP_SCANS, None)
    try:
        return pipeline.gather(base.target, base.settings, base.cache, need_descriptor=need_descriptor,
                               verify=verify, on_warn=base.on_warn)
    finally:
        base.cache.pop(pipeline.STOP_SCANS, None)


class ArenaFunction(gdb.Function):
    """A convenience function whose errors are one line (never a traceback)."""
    name = ""

    def __init__(self):
        super().__init__(self.name)

    def invoke(self, *args):
        try:
            return self.compute(*args)
        except gdb.GdbError:
            raise
        except ArenascopeError as exc:
            raise gdb.GdbError(f"${self.name}: {exc}") from None
        except gdb.error as exc:
            raise gdb.GdbError(f"${self.name}: GDB could not do it: {exc}") from None
        except Exception as exc:  # pylint: disable=broad-except
            raise gdb.GdbError(f"${self.name}: internal error {exc!r}: please report it") from None

    def compute(self, *args):
        raise NotImplementedError

    def fail(self, text):
        raise gdb.GdbError(f"${self.name}: {text}")

    def arena(self, ctx, args):
        if len(args) > 1:
            self.fail(f"takes at most one argument, the arena's index (got {len(args)})")
        index = int(args[0]) if args else 0
        found = [a for a in ctx.desc.arenas if a.index == index]
        if not found:
            self.fail(f"no arena {index}: the target has {len(ctx.desc.arenas)} (`arena info` lists them)")
        return found[0]


class OwnerFunction(ArenaFunction):
    """$arena_owner(ADDR): what owns ADDR, as `arena whereis ADDR` says it (one line)."""
    name = "arena_owner"

    def compute(self, *args):
        if len(args) != 1:
            self.fail("give one address: $arena_owner(ADDR), ADDR a number, pointer or &object")
        value = args[0]
        code = value.type.strip_typedefs().code
        if code not in (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_PTR, gdb.TYPE_CODE_ENUM, gdb.TYPE_CODE_CHAR):
            self.fail(f"not an address: a value of type {value.type} (give a number, a pointer or &object)")
        addr = int(value)
        ctx = gather(verify=True)
        lines = figures.whereis(ctx.desc, addr, ctx.stack, ctx.symbols.memory_spans())
        return "; ".join(line.strip() for line in lines + diagnosis.diagnose(ctx).overwritten_at(addr))


class FreeFunction(ArenaFunction):
    """$arena_free([N]): bytes of arena N's free band between head (or temp) and tail."""
    name = "arena_free"

    def compute(self, *args):
        ctx = gather()
        a = self.arena(ctx, args)
        return a.size - figures.used_bytes(a.head, a.temp, a.tail, a.size)


class HeadroomFunction(ArenaFunction):
    """$arena_headroom([N]): `arena info`'s headroom of arena N, in bytes."""
    name = "arena_headroom"

    def compute(self, *args):
        ctx = gather()
        index = self.arena(ctx, args).index
        if ctx.tflm is not None and ctx.tflm.unmeasured:
            self.fail(ctx.tflm.unmeasured)  # as `arena info` prints it
        return ctx.figs[index].headroom


class StackRoomFunction(ArenaFunction):
    """$arena_stack_room(): bytes between the stack's deepest point and the arena below it."""
    name = "arena_stack_room"

    def compute(self, *args):
        if args:
            self.fail("takes no argument")
        ctx = gather(need_descriptor=False, verify=True)
        s = ctx.stack
        if s.room is None:
            self.fail("no arena lies below the stack (`arena stack` shows the bounds), so there is no room to "
                      "measure")
        if s.peak is None:
            self.fail("the stack's high-water mark is unknown (not painted, no agent measurement): paint the "
                      "stack in the reset handler (arenascope_port_stack_paint)")
        return s.room_left


FUNCTIONS = [OwnerFunction, FreeFunction, HeadroomFunction, StackRoomFunction]


def register():
    for cls in FUNCTIONS:
        cls()
