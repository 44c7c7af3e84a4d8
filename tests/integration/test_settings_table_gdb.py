"""GDB's side of the one settings table (settings_table.TABLE): every setting is a `set arena`
parameter with the default the tool's option has, `show arena` lists them in the table's order, a
bad value is refused with the same words as the tool refuses it, and a setting added to the table
is all of that in both front ends. No target: GDB alone (the tool's side: tests/plugin/
test_settings_table.py, whose bad values these are)."""
import argparse
import contextlib
import io
import subprocess
import sys

import pytest

from harness import ROOT

sys.path.insert(0, str(ROOT / "gdbplugin"))
sys.path.insert(0, str(ROOT / "tests" / "plugin"))
from arenascope_plugin import cli, settings_table  # noqa: E402
from test_settings_table import BAD  # noqa: E402

PLUGIN = ROOT / "gdbplugin" / "arenascope.py"

# One setting more, declared as a table entry is; GDB sources it, the tool's parser is built with it.
EXTRA = '''
from arenascope_plugin.settings_table import Setting
EXTRA = Setting("band-step", "uint", 64, "Bytes a band scan reads at a time (a test's setting).", "the band step",
                lambda name, value: None if 4 <= int(value) <= 4096 else f"{value} B: give 4 to 4096",
                metavar="BYTES")
'''


def gdb(*commands, first=()):
    """(stdout, stderr) of GDB in batch mode with the plugin loaded."""
    args = ["gdb-multiarch", "-q", "-nx", "-batch", "-ex", f"source {PLUGIN}"]
    for c in [*first, *commands]:
        args += ["-ex", c]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    return r.stdout, r.stderr


def tool_refusal(table, flag, *words):
    """The words the tool refuses `FLAG WORDS` with: what follows `argument FLAG: `."""
    ap = argparse.ArgumentParser(prog="arenascope info")
    cli.add_setting_options(ap, table)
    err = io.StringIO()
    with pytest.raises(SystemExit), contextlib.redirect_stderr(err):
        ap.parse_args([flag, *words])
    return err.getvalue().strip().splitlines()[-1].split(f"argument {flag}: ", 1)[1]


def test_every_setting_is_a_gdb_parameter_with_the_tools_default():
    out, _ = gdb("show arena")
    shown = [line.split(": ", 1) if ": " in line else [line.rstrip(":"), ""] for line in out.splitlines()]
    assert [name for name, _ in shown] == [f"arena {s.name}" for s in settings_table.TABLE]
    ap = argparse.ArgumentParser()
    cli.add_setting_options(ap)
    args = ap.parse_args([])
    for (_, value), s in zip(shown, settings_table.TABLE, strict=True):
        assert value == cli.shown_default(s) == cli.shown_default(
            settings_table.Setting(s.name, s.type, getattr(args, s.name.replace("-", "_")), "", "")), s.name
    assert dict(shown)["arena view-port"] == "47800" and dict(shown)["arena link-timeout"] == "3"


def test_a_bad_value_is_refused_with_the_same_words_by_both():
    commands = [f"set arena {name} {value}" for name, (value, _) in BAD.items()]
    _, err = gdb(*commands)
    refused = [line for line in err.splitlines() if line]
    said = 0
    for s in settings_table.TABLE:
        value = BAD[s.name][0]
        words = value.split() if s.form == "pair" else [value]
        tool = tool_refusal(None, s.flag, *words)
        assert tool == BAD[s.name][1]
        gdb_words = tool if s.type in ("bool", "auto-bool") else \
            f"set arena {s.name}: {tool}; kept {s.default!r}"
        assert gdb_words in refused, (s.name, tool, refused)
        said += 1
    assert said == len(settings_table.TABLE) == len(refused), refused
    out, _ = gdb("show arena")  # and every one kept its default
    assert out.splitlines() == [f"arena {s.name}: {cli.shown_default(s)}" for s in settings_table.TABLE]


def test_a_setting_added_to_the_table_is_in_both_front_ends(tmp_path):
    extra = tmp_path / "extra_setting.py"
    extra.write_text(EXTRA + "\nimport arenascope_plugin.gdb.settings as s\ns.register(s.settings_table.TABLE + "
                     "[EXTRA])\n")
    out, err = gdb("show arena band-step", "set arena band-step 2", "show arena band-step",
                   "set arena band-step 128", "show arena", "help set arena band-step", first=[f"source {extra}"])
    assert "arena band-step: 64" in out.splitlines()[0]
    assert err.strip() == "set arena band-step: 2 B: give 4 to 4096; kept 64"
    assert out.splitlines()[1:3] == ["arena band-step: 64", "arena colour: auto"]
    shown = out.splitlines()[2:2 + len(settings_table.TABLE) + 1]
    assert shown[-1] == "arena band-step: 128"
    assert "Bytes a band scan reads at a time (a test's setting)." in out
    # the tool, from the same table with the same entry: the same default, the same refusal
    scope = {}
    exec(EXTRA, scope)  # pylint: disable=exec-used
    table = settings_table.TABLE + [scope["EXTRA"]]
    assert tool_refusal(table, "--band-step", "2") == "2 B: give 4 to 4096"
    ap = argparse.ArgumentParser()
    cli.add_setting_options(ap, table)
    assert ap.parse_args([]).band_step == 64 and ap.parse_args(["--band-step", "128"]).band_step == 128
