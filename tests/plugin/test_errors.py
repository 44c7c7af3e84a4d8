"""One error base (errors.ArenascopeError, issue 40): every exception class of the plugin derives
from it (found by walking the package's sources, so a new class that does not fails here); the
front ends (`arena` commands through gdb/framework.py, the tool, the live poller) show what
happened, where and what to do; and nothing else is taken for expected: a programming error still
shows as a bug (the tool: a traceback; `arena ...`: "internal error ... please report it"; the
poller: it ends)."""
import ast
import builtins
import importlib
import io
import json
import pathlib
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest

from arenascope_plugin import cli
from arenascope_plugin.errors import ArenascopeError, TargetError

PKG = pathlib.Path(__file__).resolve().parents[2] / "gdbplugin" / "arenascope_plugin"
# Exceptions that are not errors: a signal ending the tool as Ctrl-C does.
NOT_ERRORS = {"cli.Terminated"}
BUILTIN_EXCEPTIONS = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
                      and issubclass(getattr(builtins, n), BaseException)}


def exception_classes():
    """{module.Class: [its bases' last names]} of every class in the package, and the names of
    the ones that are exceptions (a base chain that ends in a built-in exception)."""
    classes = {}
    for path in sorted(PKG.rglob("*.py")):
        module = ".".join(path.relative_to(PKG).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef):
                bases = [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases]
                classes[f"{module}.{node.name}"] = bases
    by_name = {}
    for qual, bases in classes.items():
        by_name.setdefault(qual.rsplit(".", 1)[1], []).extend(bases)

    def chain(name, seen=()):
        if name in seen:
            return set()
        out = {name}
        for b in by_name.get(name, ()):
            out |= chain(b, seen + (name,))
        return out
    exceptions = {q: chain(q.rsplit(".", 1)[1]) for q in classes}
    return {q: c for q, c in exceptions.items() if c & BUILTIN_EXCEPTIONS}


def test_every_plugin_exception_derives_from_the_one_base():
    found = exception_classes()
    assert len(found) >= 20 and "acquire.reader.MemoryReadError" in found  # the walk sees them at all
    stray = sorted(q for q, c in found.items() if "ArenascopeError" not in c and q not in NOT_ERRORS
                   and q != "errors.ArenascopeError")
    assert not stray, f"exception classes not derived from errors.ArenascopeError: {stray}"


def test_the_importable_ones_derive_from_it_at_run_time():
    """The same, by the classes themselves, for every module that imports without GDB."""
    checked = 0
    for qual in exception_classes():
        module, name = qual.rsplit(".", 1)
        if module.startswith("gdb.") or module.endswith("gdbtarget") or qual in NOT_ERRORS:
            continue
        cls = getattr(importlib.import_module(f"arenascope_plugin.{module}"), name)
        assert issubclass(cls, ArenascopeError), qual
        checked += 1
    assert checked >= 20


def test_no_hand_kept_tuple_of_expected_errors():
    texts = {p: p.read_text() for p in PKG.rglob("*.py")}
    assert not [str(p) for p, t in texts.items() if "EXPECTED" in t]


def test_what_where_and_remedy_make_one_line():
    assert str(ArenascopeError("cannot read the arena")) == "cannot read the arena"
    assert str(TargetError("the descriptor is torn", where="0x20000100", remedy="halt the target")) == \
        "the descriptor is torn at 0x20000100: halt the target"
    # a message that says them already is not made longer (the messages raised whole stay word for word)
    e = ArenascopeError("cannot read 4 B at 0x20000100: halt the target", where="0x20000100",
                        remedy="halt the target")
    assert str(e) == "cannot read 4 B at 0x20000100: halt the target"
    assert (e.what, e.where, e.remedy) == ("cannot read 4 B at 0x20000100: halt the target", "0x20000100",
                                           "halt the target")
    from arenascope_plugin.acquire.reader import MemoryReadError
    m = MemoryReadError(0x20000100, 4, "the bus faulted")
    assert (str(m), m.where) == ("cannot read 4 B at 0x20000100: the bus faulted", "0x20000100")


def _tool(monkeypatch, exc, *argv):
    def gather(*_args, **_kw):
        raise exc
    monkeypatch.setattr(cli, "_gather", gather)
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = cli.main([*argv, "--elf", "fw.elf"])
    return status, out.getvalue(), err.getvalue()


def test_the_tool_shows_what_where_and_remedy(monkeypatch):
    exc = TargetError("the descriptor is torn", where="0x20000100", remedy="halt the target")
    assert _tool(monkeypatch, exc, "info") == \
        (2, "", "arenascope info: the descriptor is torn at 0x20000100: halt the target\n")
    status, out, _ = _tool(monkeypatch, exc, "check", "--json")
    assert status == 2 and "the descriptor is torn at 0x20000100: halt the target" in json.loads(out)["error"]


def test_the_tool_takes_a_programming_error_for_a_bug(monkeypatch):
    for bug in (KeyError("figs"), ValueError("bad"), AttributeError("x")):
        with pytest.raises(type(bug)):
            _tool(monkeypatch, bug, "info")


# `arena SUB` through gdb/framework.Sub with a stand-in for GDB's module (no GDB in unit tests),
# in its own interpreter so the stand-in stays there.
FRAMEWORK = r'''
import sys, types
from unittest import mock
sys.path.insert(0, sys.argv[1])

class FakeGdb(types.ModuleType):
    class error(RuntimeError): pass
    class MemoryError(error): pass
    class GdbError(Exception): pass
    class Command:
        def __init__(self, *a, **k): pass
    class Parameter:
        def __init__(self, *a, **k): pass
    class Function:
        def __init__(self, *a, **k): pass
    COMMAND_DATA = 0
    def write(self, text, *a): pass
    def parameter(self, name): return False
    def string_to_argv(self, arg): return arg.split()
    def __getattr__(self, name): return mock.MagicMock(name=name)

sys.modules["gdb"] = gdb = FakeGdb("gdb")
for sub in ("printing", "types", "events", "unwinder", "FrameDecorator"):
    sys.modules["gdb." + sub] = mock.MagicMock()
from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import framework
framework.settings.setting = lambda name: None   # colour and debug: off

class Boom(framework.Sub):
    """Raises what it is given."""
    sub = "boom"
    def run(self, args):
        raise self.exc

cmd = Boom()
for exc in (TargetError("the descriptor is torn", where="0x20000100", remedy="halt the target"), KeyError("figs")):
    cmd.exc = exc
    try:
        cmd.invoke("", False)
    except gdb.GdbError as e:
        print(e)
'''


def test_the_commands_show_what_where_and_remedy_and_a_bug_as_one():
    r = subprocess.run([sys.executable, "-c", FRAMEWORK, str(PKG.parent)], capture_output=True, text=True,
                       check=False, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "arena boom: the descriptor is torn at 0x20000100: halt the target",
        "arena boom: internal error KeyError('figs'); `set arena debug on` shows the traceback: please report it"]


class _Poller:
    """What serve/livepoll.run uses of a LivePoller; refresh raises what it is given, and stops the
    poll at its second call."""
    last, trouble, trouble_link, refreshes = None, None, "lost", 0

    def __init__(self, exc, stop):
        self.exc, self.stop, self.calls = exc, stop, 0

    def refresh(self):
        self.calls += 1
        if self.calls == 2:
            self.stop.set()
        raise self.exc

    def lost(self, why, how):
        return None

    def settle(self):
        pass


def test_the_live_poller_says_what_where_and_remedy_and_a_bug_ends_it():
    import threading

    from arenascope_plugin.acquire.planner import PlannerError
    from arenascope_plugin.serve import livepoll
    for exc, says in ((TargetError("the descriptor is torn", where="0x20000100", remedy="halt the target"),
                       "the descriptor read is corrupt: the descriptor is torn at 0x20000100: halt the target; "
                       "retrying every 0.01 s"),
                      (PlannerError("the planner failed"), "live read failed: the planner failed; retrying every "
                                                           "0.01 s")):
        said, stop = [], threading.Event()
        livepoll.run(_Poller(exc, stop), lambda snap: None, 20, stop, said.append, interval_errors=0.01)
        assert said == [says]
    stop = threading.Event()
    with pytest.raises(KeyError):
        livepoll.run(_Poller(KeyError("figs"), stop), lambda snap: None, 20, stop, lambda _text: None)
