"""Every setting of arenascope, declared once: GDB's `set arena NAME VALUE` / `show arena`
(gdb/settings.py) and the standalone tool's options and help (cli.py) are generated from TABLE.
A new setting is one Setting here (plus its test: tests/plugin/test_settings_table.py).

Each Setting has its check (run when it is set: GDB refuses a bad value and keeps the old one,
the tool refuses the option; both say the check's words) and its parse (run when it is used:
an expression may need a running target, so the front end gives its evaluator). Advice that
names a setting is a remedy.Remedy, worded by each front end. No GDB here."""
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from arenascope_plugin import paths, ports
from arenascope_plugin.acquire import targetmemory, via
from arenascope_plugin.decode import kernels
from arenascope_plugin.errors import TargetError
from arenascope_plugin.remedy import Remedy

# An expression that could write target memory or call a target function: an assignment,
# ++/--, or a call (a name followed by "(", other than sizeof/alignof).
SIDE_EFFECT = re.compile(r"<<=|>>=|\+\+|--|(?<![=!<>])=(?!=)|\b(?!sizeof\b|alignof\b|_Alignof\b)[A-Za-z_]\w*\s*\(")


class Evaluator(Protocol):
    """The front end's evaluation of an expression setting when it is used (TargetError when it
    cannot): GDB evaluates C expressions on the target; the tool takes numbers and ELF symbols."""

    def address(self, text: str) -> int:
        """Where `text` is: a number, or a symbol (an object names its address)."""

    def value(self, text: str) -> int:
        """What `text` holds: a number, or the word a variable holds."""


def split_range(text):
    """'START END' or 'START, END' (use the comma when an expression has spaces): [START, END],
    or None when it is not two parts."""
    parts = [p.strip() for p in (text.split(",") if "," in text else text.split())]
    return parts if len(parts) == 2 and all(parts) else None


def _auto(value):
    return not isinstance(value, str) or value.strip() in ("", "auto")


# Checks: (name, value) -> why the value is refused, or None. value: as the front end holds it
# (a str; bool or None for a boolean; an int for "uint").

def check_word(name, value):
    """A 32-bit word (0xAAAAAAAA), or auto."""
    if _auto(value):
        return None
    try:
        number = int(value, 0)
    except ValueError:
        return f"{value!r} is not a number; give a 32-bit word like 0xAAAAAAAA, or auto"
    return f"{value} does not fit in 32 bits" if not 0 <= number <= 0xFFFFFFFF else None


def check_expression(name, value):
    """An address expression that writes nothing and calls nothing (or auto)."""
    if _auto(value):
        return None
    for part in split_range(value) or [value]:
        if SIDE_EFFECT.search(part):
            return f"{part!r} could write target memory or call a target function"
    return None


def check_range(name, value):
    """'START END' (numbers: END above START; expressions: checked by check_expression), or auto."""
    if _auto(value):
        return None
    parts = split_range(value)
    if parts is None:
        return f"{value!r}: expected 'START END' (or 'START, END' when an expression has spaces), or auto"
    try:
        lo, hi = (int(x, 0) for x in parts)
    except ValueError:
        return check_expression(name, value)  # expressions: evaluated when used
    if hi <= lo:
        return f"the end {hi:#x} is not above the start {lo:#x}"
    return None


def check_executable(name, value):
    """An executable file, or auto."""
    if _auto(value):
        return None
    path = os.path.expanduser(value)
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        return f"{value!r} is not an executable file; give the full path, or auto"
    return None


def check_model(name, value):
    """A regular file, or auto (empty)."""
    if _auto(value):
        return None
    path = os.path.expanduser(value)
    if os.path.isfile(path):
        return None
    return f"{value!r} is not a regular file" if os.path.exists(path) else \
        f"there is no file {value!r}; give the .tflite the firmware was built with, or auto"


def check_memory(name, value):
    """What targetmemory.parse takes ('NAME START END[; ...]', or none)."""
    try:
        targetmemory.parse(value)
    except ValueError as e:
        return str(e)
    return None


def check_port(name, value):
    """A TCP port, 1..65535."""
    return None if 1 <= int(value) <= 65535 else f"{value} is not a TCP port: use 1..65535"


def check_via(name, value):
    """auto, or what via.parse_via takes (tcl:HOST:PORT, gdb:HOST:PORT)."""
    if _auto(value):
        return None
    try:
        via.parse_via(value)
    except ValueError as exc:
        return str(exc)
    return None


# Parses: (name, text, evaluator) -> what the pipeline (or the command) gets.

def parse_word(name, text, _ev=None):
    """A 32-bit word setting's value, None for auto."""
    text = str(text).strip()
    if text in ("", "auto"):
        return None
    try:
        return int(text, 0) & 0xFFFFFFFF
    except ValueError:
        raise TargetError(f"{Remedy(name):q} is {text!r}: expected 'auto' or a 32-bit number like 0xAAAAAAAA") \
            from None


def parse_range(name, text, ev):
    """(low, high) of a range setting, its expressions evaluated now; None for auto."""
    text = str(text).strip()
    if text in ("", "auto"):
        return None
    parts = split_range(text)
    if parts is None:
        raise TargetError(f"{Remedy(name):q} is {text!r}: expected 'START END' (two addresses) or 'auto'")
    lo, hi = (ev.address(p) for p in parts)
    if hi <= lo:
        raise TargetError(f"{Remedy(name):q}: end {hi:#x} is not above start {lo:#x}")
    return lo, hi


def parse_address(name, text, ev):
    """An address expression evaluated now; None for auto."""
    text = str(text).strip()
    return None if text in ("", "auto") else ev.address(text)


def parse_saved_value(name, text, ev):
    """(expression, its value now or why it has none); None for auto (pipeline.Settings.fault_sp)."""
    text = str(text).strip()
    if text in ("", "auto"):
        return None
    try:
        return text, ev.value(text)
    except TargetError as exc:
        return text, str(exc)


def parse_model(name, text, _ev=None):
    """The model file, "" for auto."""
    text = str(text).strip()
    return "" if text in ("", "auto", '""', "''") else text


def parse_tool(folder, executable):
    """The parse of a tool path setting: the executable it names, or for 'auto' build/FOLDER/
    EXECUTABLE beside this plugin, then EXECUTABLE on PATH; None when not found."""
    def parse(name, text, _ev=None):
        text = str(text).strip()
        if text not in ("", "auto"):
            text = os.path.expanduser(text)
            return text if os.path.isfile(text) and os.access(text, os.X_OK) else None
        return paths.built_tool(folder, executable)
    return parse


@dataclass(frozen=True)
class Setting:
    """One setting.
    name: `set arena NAME`; type: "string", "bool" (on/off), "auto-bool" (on/off/auto: None) or
    "uint"; default: in that type; doc: its help (GDB's `help set arena NAME`, the tool's --help);
    show: what it is, for GDB's "Set ..."/"Show ..." lines; check: (name, value) -> why a value
    is refused, or None; parse: (name, text, Evaluator) -> the value used (None: the value as
    set); option: the tool's option; metavar: the option's value in the tool's help; form: how
    the tool takes it: "one" value, a "pair" (two words, 'START END') or "repeat" (the option
    repeated, joined with '; '); field: the pipeline.Settings field it fills (None: read by the
    commands or the front end); tool_doc: the tool's help when the setting means more there
    than GDB's doc says (None: doc)."""
    name: str
    type: str
    default: object
    doc: str
    show: str
    check: Callable | None = None
    parse: Callable | None = None
    option: str = ""
    metavar: str = "VALUE"
    form: str = "one"
    field: str | None = None
    tool_doc: str | None = None

    @property
    def flag(self) -> str:
        """The tool's option: --NAME unless the table names another."""
        return self.option or f"--{self.name}"


# The order is `show arena`'s (docs/gdb-commands.md lists every setting).
TABLE = [
    Setting("colour", "auto-bool", None,
            "Colour in the arena commands' output: on, off, or auto (follow `set style enabled`). Off: plain letters "
            "in the map.", "whether arena output uses colour", metavar="on|off|auto",
            tool_doc="Colour in the output: on, off, or auto (on a terminal, unless NO_COLOR is set or TERM=dumb). "
                     "Off: plain letters in the map."),
    Setting("canary-pattern", "string", "auto",
            "Canary word for host-side scans: 'auto' uses the descriptor's (0xAAAAAAAA by default), or a 32-bit "
            "number.", "the canary word", check_word, parse_word, metavar="WORD", field="canary_pattern"),
    Setting("stack-paint-pattern", "string", "auto",
            "Stack paint word for host-side stack scans: 'auto' uses the descriptor's (0xCCCCCCCC), or a 32-bit "
            "number.", "the stack paint word", check_word, parse_word, metavar="WORD", field="stack_paint_pattern"),
    Setting("stack-range", "string", "auto",
            "Stack bounds 'LOW HIGH' (addresses or expressions) overriding the descriptor and the linker symbols; "
            "'auto' to clear.", "the stack range override", check_range, parse_range, metavar="LOW HIGH",
            form="pair", field="stack_range"),
    Setting("descriptor-address", "string", "auto",
            "Address (or expression) of the arenascope descriptor, when it has no symbol; 'auto' finds it by "
            "symbol, else by scanning.", "the descriptor address override", check_expression, parse_address,
            metavar="ADDR", field="descriptor_address"),
    Setting("scan-range", "string", "auto",
            "RAM range 'START END' to scan for the descriptor's magic when it has no symbol; 'auto' scans the "
            "loaded ELF's writable sections. Scans read through the probe: keep it small.",
            "the descriptor scan range", check_range, parse_range, metavar="START END", form="pair",
            field="scan_range"),
    Setting("view-port", "uint", 47800,
            "Loopback TCP port `arena view` serves snapshots on (the viewer reconnects to it when GDB comes back).",
            "the live view port", check_port, metavar="N",
            tool_doc="Loopback TCP port `arenascope live` serves snapshots on when given (without it, and without "
                     "--port: a free one, told at the start)."),
    Setting("viewer-path", "string", "auto",
            "The viewer executable `arena view` starts: 'auto' looks for build/viewer/arenascope-viewer beside this "
            "plugin, then arenascope-viewer on PATH.", "the viewer executable", check_executable,
            parse_tool("viewer", "arenascope-viewer"), metavar="PATH",
            tool_doc="The viewer `arenascope live` starts and `arenascope report` draws with: 'auto' looks for "
                     "build/viewer/arenascope-viewer beside this plugin, then arenascope-viewer on PATH."),
    Setting("memory", "string", "none",
            "Memory the target has beyond the ELF's sections, 'NAME START END' (numbers), several separated by ';': "
            "external RAM an arena or an interpreter is allocated in (e.g. 'psram 0x21000000 0x22000000'), named in "
            "every answer; 'none' to clear. GDB's memory map (`info mem`: the server's, or your `mem` regions) is "
            "read too.", "the memory the target has beyond the ELF", check_memory, metavar="'NAME START END'",
            form="repeat"),
    Setting("model", "string", "",
            "Agentless mode: the .tflite file the firmware runs, when its model is not an array symbol of the ELF "
            "(empty: read the model from the ELF).", "the model file for agentless mode", check_model, parse_model,
            metavar="FILE.tflite", field="model"),
    Setting("live-via", "string", "auto",
            "How `arena live` reads the running target: tcl:HOST:PORT (OpenOCD's Tcl RPC port) or gdb:HOST:PORT (a "
            "second connection to the GDB server: OpenOCD, J-Link, ST-LINK, pyOCD); 'auto' picks by the server GDB is "
            "attached to (docs/hardware.md).",
            "the live view's link", check_via, option="--via", metavar="LINK",
            tool_doc="How the tool reads the target: tcl:HOST:PORT (OpenOCD's Tcl RPC port) or gdb:HOST:PORT (a GDB "
                     "server's port: a second connection); 'auto': tcl:127.0.0.1:6666 (or --openocd)."),
    Setting("link-timeout", "string", f"{via.TIMEOUT_S:g}",
            "Seconds each request of `arena live`'s link must be answered in, whatever the server sends meanwhile "
            f"(console output, notifications, a reply dripping in); {via.MIN_TIMEOUT_S:g} to {via.MAX_TIMEOUT_S:g}. "
            "When it passes, the error says what the server did (answered nothing, flooded the link, stalled) and "
            "the refresh ends; the next one tries again (docs/hardware.md, \"What a bad server gets\").",
            "the live link's deadline a request", lambda name, value: via.check_timeout(value),
            lambda name, value, _ev=None: float(value), metavar="S",
            tool_doc="Each request to the server must be answered within S seconds, whatever it sends meanwhile "
                     f"({via.MIN_TIMEOUT_S:g} to {via.MAX_TIMEOUT_S:g}); after one is not, the command ends "
                     "(docs/hardware.md, \"What a bad server gets\")."),
    Setting("fault-sp", "string", "auto",
            "Where the fault handler saved the stack pointer at the fault (an expression: a variable, or an "
            "address), for `arena fault` when the core is halted inside the handler and LR no longer holds "
            "EXC_RETURN; 'auto' tries the common names ("
            + ", ".join(s for p in ports.all_ports() for s in p.fault_sp_symbols) + ").",
            "the fault handler's saved stack pointer", check_expression, parse_saved_value, metavar="EXPR",
            field="fault_sp",
            tool_doc="Where the fault handler saved the stack pointer at the fault (a number, or the ELF's variable "
                     "that holds it), for `arenascope fault` when the core is halted inside the handler and LR no "
                     "longer holds EXC_RETURN; 'auto' tries the common names."),
    Setting("planner-path", "string", "auto",
            "The planner tool `arena plan --model` runs: 'auto' looks for build/planner/arenascope-plan beside this "
            "plugin, then arenascope-plan on PATH.", "the planner tool", check_executable,
            parse_tool("planner", "arenascope-plan"), option="--planner", metavar="PATH", field="planner",
            tool_doc="The planner tool (arenascope-plan), which names the regions from the model: 'auto' looks for "
                     "build/planner/arenascope-plan beside this plugin, then arenascope-plan on PATH."),
    Setting("kernels", "string", "auto",
            "The TFLM kernels the firmware links, for the planner's figures and names (docs/cmsis-nn.md): 'auto' "
            "reads them from the ELF (CMSIS-NN's functions linked or not), or reference, or cmsis-nn.",
            "the firmware's TFLM kernels", lambda n, v: kernels.check_kernels(v), metavar="auto|reference|cmsis-nn",
            field="kernels"),
    Setting("cpu", "string", "auto",
            "The Cortex-M core CMSIS-NN is compiled for (its DSP and MVE paths): 'auto' reads the ELF's build "
            "attributes, or a name as arena plan's --cpu takes it (cortex-m4, cortex-m55, cortex-m55+nomve, ...).",
            "the CPU of CMSIS-NN's code", lambda n, v: kernels.check_cpu(v), metavar="NAME", field="cpu"),
    Setting("debug", "bool", False, "Show Python tracebacks of internal errors (for bug reports).",
            "whether internal errors show tracebacks", metavar="on|off",
            tool_doc="Show the Python traceback of an error (for bug reports)."),
]

BY_NAME = {s.name: s for s in TABLE}


def parsed(setting: Setting, value, ev: Evaluator | None):
    """The setting's value as its parse makes it (the value as set when it has none)."""
    return setting.parse(setting.name, value, ev) if setting.parse else value


def pipeline_fields(values: dict, ev: Evaluator | None, table=None) -> dict:
    """{pipeline.Settings field: parsed value} of the settings that fill one, from values
    {name: value as set}. Parses run now (TargetError from an evaluation that fails)."""
    return {s.field: parsed(s, values[s.name], ev) for s in (table or TABLE) if s.field}
