# arenascope GDB plugin: load with `source gdbplugin/arenascope.py` (or `gdb -x`, or the
# auto-load setups in docs/gdb-commands.md; after `pip install ./gdbplugin`, the two-line stub
# there instead). This file is the one place a checkout's plugin is put on sys.path.
# Commands: `help arena`. Settings: `show arena`.
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

from arenascope_plugin import gdb as arena_gdb  # noqa: E402  pylint: disable=wrong-import-position

arena_gdb.load()
