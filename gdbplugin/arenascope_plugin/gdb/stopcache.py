"""The arena as found at this stop, for the pretty-printers (printers.py): one quiet gather
(pipeline.gather, no re-measurement) per stop, kept until the target runs, memory or registers
change, a new ELF is loaded, or a `set arena` setting, `arena attach` or `arena dump` changes
what is read. Printers are asked for many values at one stop (an IDE's variable view, `info
locals`): without it each would walk TFLM's objects again.
Never raises: the gather's error is kept as its one-line reason."""
import gdb  # pylint: disable=import-error

from arenascope_plugin import pipeline
from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.gdb import framework, settings

_NOW = {}   # "ctx": the Context, or "why": why there is none; empty: not gathered at this stop
_BUSY = []  # set while gathering: a printer asked from inside the gather answers without it


def forget(_event=None):
    _NOW.clear()


def connect():
    """Hooks the events that make a kept gather stale (once, from register_all)."""
    for event in (gdb.events.stop, gdb.events.cont, gdb.events.exited, gdb.events.new_objfile,
                  gdb.events.memory_changed, gdb.events.register_changed, gdb.events.inferior_call):
        event.connect(forget)
    settings.ON_CHANGE.append(forget)


def context():
    """(pipeline Context or None, why none). The gather's warnings are not printed (a printer's
    output is a value, not a report; the `arena` commands say them)."""
    if _BUSY:
        return None, "the arena is being read"
    if not _NOW:
        _BUSY.append(True)
        try:
            framework.check_readable()
            base = framework.new_context()  # the commands' target, settings and cache
            _NOW["ctx"] = pipeline.gather(base.target, base.settings, base.cache, on_warn=None)
        except ArenascopeError as exc:
            _NOW["why"] = str(exc)
        except (gdb.error, ValueError, KeyError, TypeError, IndexError, AttributeError, OSError) as exc:
            _NOW["why"] = f"the arena could not be read ({exc})"
        finally:
            _BUSY.clear()
    return _NOW.get("ctx"), _NOW.get("why")
