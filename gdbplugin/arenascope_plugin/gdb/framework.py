"""The command framework: `arena SUB` commands parse their arguments with argparse, run the
pipeline through GDB's acquire/ parts, and turn every expected error into one line `arena SUB:
what happened, where, what to do` (a traceback only with `set arena debug on`)."""
import argparse
import json
import os
import traceback

import gdb  # pylint: disable=import-error

from arenascope_plugin import pipeline
from arenascope_plugin.acquire import gdbtarget
from arenascope_plugin.acquire.gdbtarget import GdbCore, GdbReader, GdbSymbols
from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.gdb import options, settings
from arenascope_plugin.present import jsonout, jsontext, style
from arenascope_plugin.present.progress import Progress

_CACHE = {}     # inferior number -> the pipeline's cache (descriptor sessions, plans)
_WARNED = set()  # warnings said since the target last stopped (each is said once a stop)
_SAID = set()    # warnings said once a session (a missing tool)
ONCE_A_SESSION = ("planner",)
_ATTACHED = {}  # inferior number -> the interpreter `arena attach` named
_DUMP = {"now": None, "said": False}  # `arena dump load`'s acquire.dumped.Dump; said: its banner, this command
_JSON = {"now": False, "messages": []}  # the running command prints one JSON document; what else it says


def forget(_event=None):
    """A new ELF, or the process exited: sessions and warnings start again."""
    _CACHE.clear()
    _WARNED.clear()


def new_stop(_event=None):
    _WARNED.clear()
    forget_scans()


# Whether band scans are kept for a stop (gdb/__init__.py: not when a hook of the user's stands
# where the plugin's would tell it of memory `monitor`, `restore` or `load` wrote).
KEEP_SCANS = True


def forget_scans(_event=None):
    """The target ran, or its memory or registers changed: band scans are read again
    (pipeline.STOP_SCANS: each band is read once a stop, however many commands ask)."""
    for cache in _CACHE.values():
        cache[pipeline.STOP_SCANS] = {}


def attached():
    return _ATTACHED.get(gdb.selected_inferior().num)


def set_attached(address):
    if address is None:
        _ATTACHED.pop(gdb.selected_inferior().num, None)
    else:
        _ATTACHED[gdb.selected_inferior().num] = address
    settings.changed()


def loaded_dump():
    """The RAM dump `arena dump load` opened (acquire.dumped.Dump), or None: the inferior is read."""
    return _DUMP["now"]


def set_dump(found):
    """Reads from this Dump from now on (None: the inferior again); sessions start again."""
    _DUMP["now"] = found
    forget()
    settings.changed()


def reader():
    """The memory reader commands use: the loaded dump's, else the inferior's (GdbReader). Says,
    once a command, that it reads a dump."""
    found = _DUMP["now"]
    if found is None:
        return GdbReader()
    if not _DUMP["said"]:
        _DUMP["said"] = True
        say(f"arena: {found.banner}\n")
    return found.reader


def target():
    found = _DUMP["now"]
    return pipeline.Target(reader(), GdbSymbols(), GdbCore() if found is None else found.core)


def check_readable(in_condition=False):
    """gdbtarget.check_readable(in_condition), unless a dump is loaded (its bytes are always there)."""
    if _DUMP["now"] is None:
        gdbtarget.check_readable(in_condition)


def say_warning(key, text, prefix="arena"):
    """Prints a pipeline warning: once a stop (a missing tool once a session). A JSON document
    stands alone, so each one carries every warning of its command (once)."""
    line = f"{prefix}: warning: {text}\n"
    if _JSON["now"]:
        if line.rstrip("\n") not in _JSON["messages"]:
            say(line)
        return
    seen = _SAID if key in ONCE_A_SESSION else _WARNED
    if key not in seen:
        seen.add(key)
        say(line)


def say(text):
    """Writes a message that is not the report (a warning, a note, a file written). While the
    command prints JSON it goes into the document's "messages" instead: GDB's `pipe` sends
    stderr down the pipe too, so only that keeps `pipe arena check --json | jq` one document."""
    if _JSON["now"]:
        _JSON["messages"].append(text.rstrip("\n"))
    else:
        gdb.write(text)


def emit(doc):
    """Prints a command's JSON document (--json, `arena snapshot -`) on GDB's stdout, with the
    messages said so far as "messages": [str] (docs/command-json-schema.json)."""
    gdb.write(jsontext.dumps(dict(doc, messages=_JSON["messages"][:])) + "\n")
    _JSON["messages"].clear()
    _JSON["emitted"] = True


def new_context():
    """An empty pipeline Context on GDB's parts (for a command that goes on without a gather)."""
    return pipeline.Context(target=target(), settings=settings.resolved(attached()),
                            cache=_cache(), on_warn=say_warning)


def _cache():
    """The selected inferior's pipeline cache (with its band scans of this stop)."""
    cache = _CACHE.setdefault(gdb.selected_inferior().num, {})
    if KEEP_SCANS:
        cache.setdefault(pipeline.STOP_SCANS, {})
    else:
        cache.pop(pipeline.STOP_SCANS, None)
    return cache


def gather(need_descriptor=True, verify=False):
    """pipeline.gather through GDB, its warnings said."""
    check_readable()
    return pipeline.gather(target(), settings.resolved(attached()), _cache(),
                           need_descriptor=need_descriptor, verify=verify, on_warn=say_warning)


def _on_a_terminal() -> bool:
    """Whether GDB's standard output is a terminal (where a progress line can update in place)."""
    try:
        return os.isatty(1)
    except OSError:
        return False

class ArgError(ArenascopeError):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ArgError(f"{message} (see `help arena {self.prog.split()[-1]}`)")

    def exit(self, status=0, message=None):
        raise ArgError(message or "")

    def print_help(self, file=None):
        gdb.write(self.format_help())


def write(lines):
    for line in lines:
        gdb.write(line + "\n")


class Sub(gdb.Command):
    """An `arena SUB` command: sub, add_arguments, run(args). Completion comes from its parser
    (options.complete). json_doc: the command takes --json (docs/command-json-schema.json)."""
    sub = ""
    json_doc = False

    def __init__(self):
        super().__init__(f"arena {self.sub}", gdb.COMMAND_DATA)
        self.parser = Parser(prog=f"arena {self.sub}", add_help=True, description=self.__doc__.splitlines()[0])
        self.add_arguments(self.parser)
        if self.json_doc:
            self.parser.add_argument("--json", action="store_true",
                                     help="print one JSON document instead (docs/command-json-schema.json)")

    def prints_json(self, args):
        """True when this run prints one JSON document through emit(): what else it says goes
        into the document's "messages" (say), and progress is not shown."""
        return self.json_doc and args.json

    def add_arguments(self, parser):
        pass

    def parse(self, arg):
        return self.parser.parse_args(gdb.string_to_argv(arg))

    def complete(self, text, word):
        found = options.complete(self.parser, text, word)
        if found == options.FILE:
            # GDB asks twice: first (word None) for the word-break characters, where the
            # constant gives file names' own; then for the names. Its file completer would
            # match the whole argument text ("load fw.b" in `arena dump load fw.b`), so the
            # names come from options.file_names, for the current token only.
            return gdb.COMPLETE_FILENAME if word is None else options.file_names(text, word)
        if found == options.EXPRESSION:
            return gdb.COMPLETE_EXPRESSION
        return found

    def invoke(self, arg, from_tty):
        colour = settings.setting("colour")
        style.enabled = bool(gdb.parameter("style enabled")) if colour is None else bool(colour)
        try:
            args = self.parse(arg)
        except ArgError as exc:
            if str(exc).strip():
                if self.json_doc and "--json" in gdb.string_to_argv(arg):
                    self._json_error(f"arena {self.sub}: {exc}")
                raise gdb.GdbError(f"arena {self.sub}: {exc}") from None
            return
        _DUMP["said"] = False
        _JSON["now"] = self.prints_json(args)
        _JSON["messages"].clear()
        _JSON["emitted"] = False
        # the line updates in place: on a terminal only (captured output, batch runs and generated
        # docs would keep a line whose appearance depends on how fast the machine is)
        shown = not _JSON["now"] and _on_a_terminal()
        progress = Progress(gdb.write if shown else lambda _text: None, f"arena {self.sub}")
        GdbReader.progress = progress
        try:
            try:
                self.run(args)
            except KeyboardInterrupt:
                progress.shown = False
                raise gdb.GdbError(f"\narena {self.sub}: {progress.interrupted()}") from None
            except ArenascopeError as exc:
                raise gdb.GdbError(f"arena {self.sub}: {exc}") from None
            except gdb.GdbError:
                raise
            except gdb.error as exc:
                raise gdb.GdbError(f"arena {self.sub}: GDB could not do it: {exc}") from None
            except Exception as exc:  # pylint: disable=broad-except
                if settings.setting("debug"):
                    traceback.print_exc()
                raise gdb.GdbError(f"arena {self.sub}: internal error {exc!r}; `set arena debug on` shows the "
                                   "traceback: please report it") from None
        except gdb.GdbError as exc:
            if _JSON["now"] and not _JSON.get("emitted"):  # --json: the error as the one document, then
                # GDB's error (a batch exits non-zero); a report already printed (check's failed rules) stands
                self._json_error(str(exc).strip())
            raise
        finally:
            GdbReader.progress = None
            progress.done()
            _JSON["now"] = False
            for text in _JSON["messages"]:  # said before an error ended the command: not lost
                gdb.write(text + "\n")
            _JSON["messages"].clear()

    def _json_error(self, message):
        """Prints the --json error document (jsonout.error) with the messages said so far."""
        gdb.write(json.dumps(dict(jsonout.error(self.sub, message), messages=_JSON["messages"][:]), indent=1) + "\n")
        _JSON["messages"].clear()

    def run(self, args):
        raise NotImplementedError
