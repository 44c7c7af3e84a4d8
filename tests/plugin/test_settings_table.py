"""The one settings table (settings_table.TABLE) and the standalone tool's options generated from it:
each setting is an option of the tool with GDB's default, refused with the table's check's words,
listed in the tool's help; a setting added to the table is all of that too. GDB's side of the same
table: tests/integration/test_settings_table_gdb.py."""
import argparse
import contextlib
import io
import os
import subprocess
import sys

import pytest

from arenascope_plugin import cli, pipeline, settings_table
from arenascope_plugin.errors import TargetError
from arenascope_plugin.settings_table import TABLE, Setting
from conftest import ROOT

CLI = ROOT / "gdbplugin" / "arenascope"

# A bad value of every setting and the words its check refuses it with (the same in GDB:
# tests/integration/test_settings_table_gdb.py sets the same values).
BAD = {
    "colour": ("maybe", '"on", "off" or "auto" expected.'),  # GDB's own words for a boolean
    "canary-pattern": ("zz", "'zz' is not a number; give a 32-bit word like 0xAAAAAAAA, or auto"),
    "stack-paint-pattern": ("0x1FFFFFFFF", "0x1FFFFFFFF does not fit in 32 bits"),
    "stack-range": ("0x20002000 0x20001000", "the end 0x20001000 is not above the start 0x20002000"),
    "descriptor-address": ("x++", "'x++' could write target memory or call a target function"),
    "scan-range": ("0x20000000 0x20000000", "the end 0x20000000 is not above the start 0x20000000"),
    "view-port": ("70000", "70000 is not a TCP port: use 1..65535"),
    "viewer-path": ("/etc/passwd", "'/etc/passwd' is not an executable file; give the full path, or auto"),
    "memory": ("psram 0x2", "'psram 0x2': expected NAME START END, e.g. 'psram 0x21000000 0x22000000'"),
    "model": ("/no/such.tflite",
              "there is no file '/no/such.tflite'; give the .tflite the firmware was built with, or auto"),
    "live-via": ("tcl:127.0.0.1:0", "'127.0.0.1:0': port 0 is not 1..65535"),
    "link-timeout": ("0", "0 s: give 0.1 to 600 seconds"),
    "fault-sp": ("f(1)", "'f(1)' could write target memory or call a target function"),
    "planner-path": ("/etc/passwd", "'/etc/passwd' is not an executable file; give the full path, or auto"),
    "kernels": ("xtensa", "'xtensa': use auto, reference or cmsis-nn"),
    "cpu": ("cortex-m99", "'cortex-m99': use auto or one of cortex-m0, cortex-m0plus, cortex-m3, cortex-m23, "
                          "cortex-m4, cortex-m7, cortex-m33, cortex-m55, cortex-m85, optionally with +nodsp or +nomve "
                          "as gcc's -mcpu takes them"),
    "debug": ("maybe", '"on" or "off" expected.'),
}


def parser(table=None):
    ap = argparse.ArgumentParser(prog="arenascope info")
    ap.add_argument("--elf")
    cli.add_setting_options(ap, table)
    return ap


def refusal(ap, *argv):
    """The words the tool refuses argv with (argparse's message, as `arenascope` prints it)."""
    err = io.StringIO()
    with pytest.raises(SystemExit) as exc, contextlib.redirect_stderr(err):
        ap.parse_args(list(argv))
    assert exc.value.code == 2
    return err.getvalue().strip().splitlines()[-1]


def test_the_table_has_every_setting_once_in_show_arenas_order():
    assert [s.name for s in TABLE] == [
        "colour", "canary-pattern", "stack-paint-pattern", "stack-range", "descriptor-address", "scan-range",
        "view-port", "viewer-path", "memory", "model", "live-via", "link-timeout", "fault-sp", "planner-path",
        "kernels", "cpu", "debug"]
    assert set(BAD) == set(settings_table.BY_NAME)
    # every pipeline.Settings field a user sets is filled by one setting
    assert sorted(s.field for s in TABLE if s.field) == sorted(
        f for f in pipeline.Settings.__dataclass_fields__ if f != "interpreter")


def test_every_setting_is_a_tool_option_with_gdbs_default():
    args = parser().parse_args([])
    for s in TABLE:
        assert getattr(args, s.name.replace("-", "_")) == s.default, s.name
    assert (args.canary_pattern, args.view_port, args.colour, args.debug, args.link_timeout, args.model) == \
        ("auto", 47800, None, False, "3", "")
    flags = {o for a in parser()._actions for o in a.option_strings}  # pylint: disable=protected-access
    assert {"--canary-pattern", "--stack-paint-pattern", "--scan-range", "--planner", "--via", "--fault-sp",
            "--view-port", "--viewer-path", "--colour", "--debug"} <= flags


def test_a_bad_value_is_refused_with_the_checks_words():
    ap = parser()
    for s in TABLE:
        text, words = BAD[s.name]
        argv = [s.flag, *text.split()] if s.form == "pair" else [s.flag, text]
        assert refusal(ap, *argv) == f"arenascope info: error: argument {s.flag}: {words}", s.name


def test_good_values_are_the_types_gdb_holds():
    args = parser().parse_args(["--canary-pattern", "0xDEADBEEF", "--stack-range", "0x20000000", "0x20001000",
                                "--memory", "psram 0x21000000 0x22000000", "--memory", "sdram 0x60000000 0x61000000",
                                "--view-port", "5000", "--colour", "off", "--debug", "--kernels", "cmsis-nn"])
    assert (args.canary_pattern, args.stack_range, args.view_port, args.colour, args.debug, args.kernels) == \
        ("0xDEADBEEF", "0x20000000 0x20001000", 5000, False, True, "cmsis-nn")
    assert args.memory == "psram 0x21000000 0x22000000; sdram 0x60000000 0x61000000"
    assert args.given_settings == {"canary-pattern", "stack-range", "memory", "view-port", "colour", "debug",
                                   "kernels"}


class Numbers:
    """An Evaluator that takes numbers only."""

    @staticmethod
    def address(text):
        try:
            return int(text, 0)
        except ValueError:
            raise TargetError(f"{text!r}: not a number") from None

    value = address


def test_the_pipeline_settings_come_from_the_table():
    args = parser().parse_args(["--canary-pattern", "0xDEADBEEF", "--stack-range", "0x20000000", "0x20001000",
                                "--scan-range", "0x20000000", "0x20000400", "--descriptor-address", "0x20000100",
                                "--fault-sp", "0x20000f00", "--kernels", "reference"])
    values = {s.name: getattr(args, s.name.replace("-", "_")) for s in TABLE}
    got = pipeline.Settings(**settings_table.pipeline_fields(values, Numbers))
    assert (got.canary_pattern, got.stack_paint_pattern, got.stack_range, got.scan_range, got.descriptor_address,
            got.fault_sp, got.kernels, got.cpu, got.model) == \
        (0xDEADBEEF, None, (0x20000000, 0x20001000), (0x20000000, 0x20000400), 0x20000100,
         ("0x20000f00", 0x20000F00), "reference", "auto", "")


def test_the_tools_evaluator_takes_numbers_and_the_elfs_symbols():
    class Symbols:
        @staticmethod
        def address(name):
            return {"g_fault_sp": 0x20000010, "arenascope_descriptor": 0x20000100}.get(name)

    class Reader:
        @staticmethod
        def read(addr, size):
            assert (addr, size) == (0x20000010, 4)
            return (0x20003F00).to_bytes(4, "little")

    ev = cli.ToolEvaluator(Symbols, Reader)
    assert (ev.address("0x20000100"), ev.address("arenascope_descriptor"), ev.value("g_fault_sp")) == \
        (0x20000100, 0x20000100, 0x20003F00)
    with pytest.raises(TargetError, match="'&x \\+ 4': the tool takes a number or the name of a symbol"):
        ev.address("&x + 4")


EXTRA = Setting("band-step", "uint", 64, "Bytes a band scan reads at a time (a test's setting).", "the band step",
                lambda name, value: None if 4 <= int(value) <= 4096 else f"{value} B: give 4 to 4096",
                metavar="BYTES")


def test_a_setting_added_to_the_table_is_a_tool_option_in_its_help():
    table = TABLE + [EXTRA]
    ap = parser(table)
    assert ap.parse_args([]).band_step == 64
    assert ap.parse_args(["--band-step", "128"]).band_step == 128
    assert refusal(ap, "--band-step", "2") == "arenascope info: error: argument --band-step: 2 B: give 4 to 4096"
    assert "--band-step BYTES" in ap.format_help() and "Bytes a band scan reads at a time" in ap.format_help()
    assert cli.settings_help(table).splitlines()[-1].split() == ["--band-step", "BYTES", "default", "64"]


def test_the_tools_help_lists_every_setting():
    out = subprocess.run([sys.executable, str(CLI), "--help"], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=str(ROOT / "gdbplugin"))).stdout
    listed = out.split("Settings (GDB's `set arena NAME`", 1)[1].splitlines()[1:]
    assert [line.split()[0] for line in listed] == [s.flag for s in TABLE]
    assert "    --canary-pattern WORD" in out and "default 47800" in out


ELF = ROOT / "build" / "firmware" / "demo_fw.elf"


@pytest.mark.skipif(not ELF.exists(), reason=f"{ELF} not built")
def test_the_tools_advice_names_its_own_options(tmp_path):
    """A RAM dump with no descriptor in it: the tool's error points at its option, not GDB's setting."""
    dump = tmp_path / "zeros.bin"
    dump.write_bytes(bytes(4096))
    r = subprocess.run([sys.executable, str(CLI), "info", "--elf", str(ELF), "--ram", f"{dump}@0x20000000",
                        "--descriptor-address", "0x20000100", "--stack-range", "__StackLimit", "__StackTop"],
                       capture_output=True, text=True, timeout=60, env=dict(os.environ, PYTHONPATH=""))
    assert r.returncode == 2
    assert "no arenascope descriptor at 0x20000100: magic is 00 00 00 00 00 00 00 00" in r.stderr
    assert "or check the --descriptor-address option)" in r.stderr and "set arena" not in r.stderr \
        and "show arena" not in r.stderr, r.stderr
