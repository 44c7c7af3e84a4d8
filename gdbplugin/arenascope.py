# arenascope GDB plugin: load with `source gdbplugin/arenascope.py` (or `gdb -x`, or the
# auto-load setups in docs/gdb-commands.md). Commands: `help arena`. Settings: `show arena`.
# GDB's embedded Python 3 (3.11 on Debian 12), standard library only (pyelftools, when present,
# reads the ELF's RAM sections for the descriptor scan).
import inspect
import os
import sys

# This file's own path from its code object: __file__ is the outer script's when another
# script (an auto-load stub) sources this one.
_HERE = os.path.dirname(os.path.abspath(inspect.currentframe().f_code.co_filename))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import gdb  # noqa: E402  pylint: disable=import-error,wrong-import-position

if getattr(gdb, "_arenascope_loaded", False):
    gdb.write("arenascope: already loaded\n")
else:
    from arenascope_plugin import gdb as arena_gdb  # noqa: E402  pylint: disable=wrong-import-position
    arena_gdb.register_all()
    gdb._arenascope_loaded = True  # pylint: disable=protected-access
