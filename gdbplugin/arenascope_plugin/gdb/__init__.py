"""The GDB front end: `arena ...` commands (one file each: cmd_*.py), their settings (GDB's
parameters, generated in settings.py from settings_table.TABLE), the command framework (framework.py) and
the live view's stop events (events.py), the pretty-printers for TFLM's types (printers.py, their
per-stop gather in stopcache.py) and the convenience functions $arena_*() (functions.py). With
acquire/gdbtarget.py the only code that imports gdb."""
import gdb  # pylint: disable=import-error

from arenascope_plugin.gdb import (
    cmd_attach,
    cmd_budget,
    cmd_check,
    cmd_diff,
    cmd_dump,
    cmd_fault,
    cmd_info,
    cmd_interpreters,
    cmd_live,
    cmd_map,
    cmd_plan,
    cmd_prefix,
    cmd_refresh,
    cmd_regions,
    cmd_report,
    cmd_snapshot,
    cmd_soak,
    cmd_stack,
    cmd_version,
    cmd_view,
    cmd_whereis,
    framework,
    functions,
    printers,
    settings,
    stopcache,
)

COMMANDS = [cmd_info.InfoCommand, cmd_map.MapCommand, cmd_regions.RegionsCommand, cmd_plan.PlanCommand,
            cmd_stack.StackCommand, cmd_check.CheckCommand, cmd_whereis.WhereisCommand, cmd_snapshot.SnapshotCommand,
            cmd_report.ReportCommand, cmd_diff.DiffCommand, cmd_view.ViewCommand, cmd_refresh.RefreshCommand,
            cmd_fault.FaultCommand, cmd_attach.AttachCommand, cmd_interpreters.InterpretersCommand,
            cmd_version.VersionCommand, cmd_live.LiveCommand, cmd_dump.DumpCommand,
            cmd_budget.BudgetCommand, cmd_soak.SoakCommand]


def load():
    """Loads the plugin into this GDB once: register_all(), or the line "arenascope: already loaded"
    when a copy (this one, the checkout's arenascope.py or another install) is already in. Returns
    whether it loaded. The loader every way in shares: gdbplugin/arenascope.py, the two-line stub
    of a pip install (`python import arenascope_plugin.gdb as a; a.load()`) and the inline
    .debug_gdb_scripts entry (target_agent/include/arenascope/gdb_autoload.h)."""
    if getattr(gdb, "_arenascope_loaded", False):
        gdb.write("arenascope: already loaded\n")
        return False
    register_all()
    gdb._arenascope_loaded = True  # pylint: disable=protected-access
    return True


# GDB commands that write target memory without GDB's memory_changed event: the server's own
# (`monitor mww`, `monitor reset`), a file put back into memory, a program flashed.
MEMORY_WRITERS = ("monitor", "restore", "load")


def _hook_memory_writers():
    """A hook after each of MEMORY_WRITERS forgets this stop's band scans (framework.forget_scans),
    so the next `arena` command reads what they wrote. A hook of the user's own is kept: GDB has one
    per command: then band scans are not kept at all (every command reads them)."""
    for command in MEMORY_WRITERS:
        try:
            body = gdb.execute(f"show user hookpost-{command}", to_string=True)
            if "forget_scans" not in body:
                framework.KEEP_SCANS = False  # the user's own hook: nothing tells us of that write
            continue
        except gdb.error:
            pass
        gdb.execute(f"define hookpost-{command}\npython __import__('arenascope_plugin.gdb.framework', "
                    "fromlist=['forget_scans']).forget_scans()\nend")


def register_all():
    """Creates every setting and command, and hooks GDB's events (once: call load(), which guards it)."""
    settings.register()  # every setting of settings_table.TABLE, in its order
    cmd_prefix.ArenaPrefix()
    for cls in COMMANDS:
        cls()
    gdb.events.new_objfile.connect(framework.forget)
    gdb.events.exited.connect(framework.forget)
    gdb.events.stop.connect(framework.new_stop)
    for event in (gdb.events.cont, gdb.events.memory_changed, gdb.events.register_changed, gdb.events.inferior_call):
        event.connect(framework.forget_scans)
    _hook_memory_writers()
    printers.register()  # TFLM's types, collection "arenascope" (printers.py)
    functions.register()  # $arena_owner(), $arena_free(), $arena_headroom(), $arena_stack_room()
    stopcache.connect()
