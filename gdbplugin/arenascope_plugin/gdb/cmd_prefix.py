"""`arena`: the prefix command and its help (the list of commands)."""
import gdb  # pylint: disable=import-error


class ArenaPrefix(gdb.Command):
    """Inspect TensorFlow Lite Micro tensor arenas through the arenascope agent's descriptor, or,
in a firmware without the agent, through TFLM's own objects (agentless mode, needs -g).

Commands (all read-only: they never write target memory or call target functions):
  arena info              bounds, head/temp/tail, used, peak, headroom, canary and stack figures
  arena map [--width N]   the arena as a bar, a legend, then the regions by address
  arena regions [--sort address|size|lifetime]   the region table
  arena plan [--width N]  live bytes per operator, the lower bound (--model FILE: a model's, no target)
  arena stack             stack bounds, paint, high-water mark (works without the agent too)
  arena check             PASS/WARN/FAIL rules; a FAIL makes `gdb -batch` exit non-zero
  arena whereis ADDR      what owns an address
  arena snapshot FILE     everything above as JSON (docs/snapshot-schema.md)
  arena report FILE.html  a self-contained HTML report to share: map, plan, verdicts, every region
  arena diff A.json [B.json]   what changed between two snapshots (B omitted: the target now)
  arena view              open the live arena map window (the viewer), fed at every stop
  arena refresh           send the viewer a fresh snapshot now
  arena live              stream snapshots while the core runs, through OpenOCD's Tcl port
  arena fault             decode the last fault and say whether the stack or the arena did it
  arena attach EXPR       agentless: read this tflite::MicroInterpreter (docs/integrating-tflm.md)
  arena interpreters      agentless: every MicroInterpreter, one or two arenas (docs/two-arenas.md)
  arena dump load FILE@ADDR ...   read a RAM dump instead of the target (post-mortem)
  arena version           arenascope's version and its formats' versions (no target needed)
Settings: `show arena` lists them; `set arena colour off` for plain output.
Docs: docs/gdb-commands.md."""

    def __init__(self):
        super().__init__("arena", gdb.COMMAND_DATA, prefix=True)

    def invoke(self, arg, from_tty):
        if arg.strip():
            raise gdb.GdbError(f"arena: unknown command {arg.split()[0]!r}; `help arena` lists the commands")
        gdb.execute("help arena")
