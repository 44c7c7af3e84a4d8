"""`set arena NAME VALUE` / `show arena [NAME]`: each setting is a Spec with its check (run when
it is set: a bad value is refused and the old one kept) and its parse (run when it is used:
expressions may need a running target). Commands declare the settings only they use in their
own file (SETTINGS = [Spec(...)]); the pipeline's are here. resolved() turns them into the
pipeline's Settings."""
import os
from collections.abc import Callable
from dataclasses import dataclass

import gdb  # pylint: disable=import-error

from arenascope_plugin import paths, pipeline
from arenascope_plugin.acquire import targetmemory
from arenascope_plugin.acquire.gdbtarget import _SIDE_EFFECT, parse_address
from arenascope_plugin.decode import kernels
from arenascope_plugin.errors import TargetError


def split_range(text):
    """'START END' or 'START, END' (use the comma when an expression has spaces)."""
    parts = [p.strip() for p in (text.split(",") if "," in text else text.split())]
    return parts if len(parts) == 2 and all(parts) else None


def _auto(value):
    return not isinstance(value, str) or value.strip() in ("", "auto")


def check_word(name, value):
    if _auto(value):
        return None
    try:
        number = int(value, 0)
    except ValueError:
        return f"{value!r} is not a number; give a 32-bit word like 0xAAAAAAAA, or auto"
    return f"{value} does not fit in 32 bits" if not 0 <= number <= 0xFFFFFFFF else None


def check_expression(name, value):
    if _auto(value):
        return None
    for part in split_range(value) or [value]:
        if _SIDE_EFFECT.search(part):
            return f"{part!r} could write target memory or call a target function"
    return None


def check_range(name, value):
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
    if _auto(value):
        return None
    path = os.path.expanduser(value)
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        return f"{value!r} is not an executable file; give the full path, or auto"
    return None


def check_model(name, value):
    if _auto(value):
        return None
    path = os.path.expanduser(value)
    if os.path.isfile(path):
        return None
    return f"{value!r} is not a regular file" if os.path.exists(path) else \
        f"there is no file {value!r}; give the .tflite the firmware was built with, or auto"


def check_memory(name, value):
    try:
        targetmemory.parse(value)
    except ValueError as e:
        return str(e)
    return None


def check_port(name, value):
    return None if 1 <= int(value) <= 65535 else f"{value} is not a TCP port: use 1..65535"


def parse_word(name, text):
    """A 32-bit word setting's value, None for auto."""
    text = str(text).strip()
    if text in ("", "auto"):
        return None
    try:
        return int(text, 0) & 0xFFFFFFFF
    except ValueError:
        raise TargetError(f"`set arena {name}` is {text!r}: expected 'auto' or a 32-bit number like 0xAAAAAAAA") \
            from None


def parse_range(name, text):
    """(low, high) of a range setting, its expressions evaluated now; None for auto."""
    text = str(text).strip()
    if text in ("", "auto"):
        return None
    parts = split_range(text)
    if parts is None:
        raise TargetError(f"`set arena {name}` is {text!r}: expected 'START END' (two addresses) or 'auto'")
    lo, hi = (parse_address(p) for p in parts)
    if hi <= lo:
        raise TargetError(f"`set arena {name}`: end {hi:#x} is not above start {lo:#x}")
    return lo, hi


def parse_address_setting(name, text):
    """An address expression evaluated now; None for auto."""
    text = str(text).strip()
    return None if text in ("", "auto") else parse_address(text)


def parse_model(name, text):
    text = str(text).strip()
    return "" if text in ("auto", '""', "''") else text


def parse_tool(folder, executable):
    """The parse of a tool path setting: the executable it names, or for 'auto' build/FOLDER/
    EXECUTABLE beside this plugin, then EXECUTABLE on PATH; None when not found."""
    def parse(name, text):
        text = str(text).strip()
        if text not in ("", "auto"):
            text = os.path.expanduser(text)
            return text if os.path.isfile(text) and os.access(text, os.X_OK) else None
        return paths.built_tool(folder, executable)
    return parse


@dataclass
class Spec:
    """One setting: GDB parameter kind, default, help, its check (name, value -> problem or None,
    run when it is set) and its parse (name, value -> what the pipeline gets, run when it is used:
    an expression may need a running target)."""
    name: str
    kind: int
    default: object
    doc: str
    show: str
    check: Callable | None = None
    parse: Callable | None = None


class _Setting(gdb.Parameter):
    """A `set arena NAME` / `show arena NAME` parameter."""

    def __init__(self, spec):
        self.__doc__ = spec.doc
        self.set_doc = f"Set {spec.show}."
        self.show_doc = f"Show {spec.show}."
        super().__init__(f"arena {spec.name}", gdb.COMMAND_DATA, spec.kind)
        self.value = spec.default
        self._spec = spec
        self._good = spec.default

    def get_set_string(self):
        """Checks the new value when it is set; a bad one is refused and the old one kept."""
        value = self.value
        if isinstance(value, str):
            value = value.strip() or "auto"
            self.value = value
        problem = self._spec.check(self._spec.name, value) if self._spec.check else None
        if problem:
            self.value = self._good
            raise gdb.GdbError(f"set arena {self._spec.name}: {problem}; kept {self._good!r}")
        self._good = self.value
        changed()
        return ""

    def get_show_string(self, svalue):
        return f"arena {self._spec.name}: {svalue}"


class _SetArena(gdb.Command):
    """Settings of the arenascope plugin: `set arena NAME VALUE` (see `show arena`)."""

    def __init__(self):
        super().__init__("set arena", gdb.COMMAND_DATA, prefix=True)

    def invoke(self, arg, from_tty):
        gdb.execute("help set arena")


class _ShowArena(gdb.Command):
    """Show the arenascope plugin's settings: `show arena` lists them all."""

    def __init__(self):
        super().__init__("show arena", gdb.COMMAND_DATA, prefix=True)

    def invoke(self, arg, from_tty):
        for name, param in PARAMS.items():
            value = param.value
            if isinstance(value, bool) or value is None:
                value = "auto" if value is None else "on" if value else "off"
            gdb.write(f"arena {name}: {value}\n")


# The pipeline's settings (docs/gdb-commands.md lists every setting with `show arena`).
SETTINGS = [
    Spec("colour", gdb.PARAM_AUTO_BOOLEAN, None,
         "Colour in the arena commands' output: on, off, or auto (follow `set style enabled`). Off: plain letters "
         "in the map.", "whether arena output uses colour"),
    Spec("canary-pattern", gdb.PARAM_STRING, "auto",
         "Canary word for host-side scans: 'auto' uses the descriptor's (0xAAAAAAAA by default), or a 32-bit number.",
         "the canary word", check_word, parse_word),
    Spec("stack-paint-pattern", gdb.PARAM_STRING, "auto",
         "Stack paint word for host-side stack scans: 'auto' uses the descriptor's (0xCCCCCCCC), or a 32-bit number.",
         "the stack paint word", check_word, parse_word),
    Spec("stack-range", gdb.PARAM_STRING, "auto",
         "Stack bounds 'LOW HIGH' (addresses or expressions) overriding the descriptor and the linker symbols; "
         "'auto' to clear.", "the stack range override", check_range, parse_range),
    Spec("descriptor-address", gdb.PARAM_STRING, "auto",
         "Address (or expression) of the arenascope descriptor, when it has no symbol; 'auto' finds it by "
         "symbol, else by scanning.", "the descriptor address override", check_expression,
         parse_address_setting),
    Spec("scan-range", gdb.PARAM_STRING, "auto",
         "RAM range 'START END' to scan for the descriptor's magic when it has no symbol; 'auto' scans the "
         "loaded ELF's writable sections. Scans read through the probe: keep it small.", "the descriptor scan range",
         check_range, parse_range),
    Spec("memory", gdb.PARAM_STRING, "none",
         "Memory the target has beyond the ELF's sections, 'NAME START END' (numbers), several separated by ';': "
         "external RAM an arena or an interpreter is allocated in (e.g. 'psram 0x21000000 0x22000000'), named in "
         "every answer; 'none' to clear. GDB's memory map (`info mem`: the server's, or your `mem` regions) is "
         "read too.", "the memory the target has beyond the ELF", check_memory),
    Spec("model", gdb.PARAM_STRING, "",
         "Agentless mode: the .tflite file the firmware runs, when its model is not an array symbol of the ELF "
         "(empty: read the model from the ELF).", "the model file for agentless mode", check_model, parse_model),
    Spec("planner-path", gdb.PARAM_STRING, "auto",
         "The planner tool `arena plan --model` runs: 'auto' looks for build/planner/arenascope-plan beside this "
         "plugin, then arenascope-plan on PATH.", "the planner tool", check_executable,
         parse_tool("planner", "arenascope-plan")),
    Spec("kernels", gdb.PARAM_STRING, "auto",
         "The TFLM kernels the firmware links, for the planner's figures and names (docs/cmsis-nn.md): 'auto' "
         "reads them from the ELF (CMSIS-NN's functions linked or not), or reference, or cmsis-nn.",
         "the firmware's TFLM kernels", lambda n, v: kernels.check_kernels(v)),
    Spec("cpu", gdb.PARAM_STRING, "auto",
         "The Cortex-M core CMSIS-NN is compiled for (its DSP and MVE paths): 'auto' reads the ELF's build "
         "attributes, or a name as arena plan's --cpu takes it (cortex-m4, cortex-m55, cortex-m55+nomve, ...).",
         "the CPU of CMSIS-NN's code", lambda n, v: kernels.check_cpu(v)),
    Spec("debug", gdb.PARAM_BOOLEAN, False, "Show Python tracebacks of internal errors (for bug reports).",
         "whether internal errors show tracebacks"),
]
PARAMS = {}
ON_CHANGE = []  # called when what a gather reads changes (changed()): what was read before is stale (stopcache)


def changed():
    """A setting took a new value, or `arena attach` / `arena dump` changed what is read."""
    for hook in ON_CHANGE:
        hook()


def register(specs):
    """Creates the GDB parameters of these specs (the prefixes once)."""
    if not PARAMS:
        _SetArena()
        _ShowArena()
    for spec in specs:
        PARAMS[spec.name] = _Setting(spec)


def setting(name):
    return PARAMS[name].value


def value(name):
    """The setting's value as its spec parses it (the raw value when it has no parse)."""
    param = PARAMS[name]
    return param._spec.parse(name, param.value) if param._spec.parse else param.value  # pylint: disable=protected-access


def tool_path(name, folder, executable):
    """The executable a tool path setting names (see parse_tool)."""
    return parse_tool(folder, executable)(name, setting(name))


def resolved(interpreter=None, fault_sp=None):
    """The pipeline's Settings from the `set arena` values, each parsed by its spec now."""
    return pipeline.Settings(
        canary_pattern=value("canary-pattern"), stack_paint_pattern=value("stack-paint-pattern"),
        stack_range=value("stack-range"), scan_range=value("scan-range"),
        descriptor_address=value("descriptor-address"), model=value("model"), planner=value("planner-path"),
        interpreter=interpreter, fault_sp=fault_sp, kernels=value("kernels"), cpu=value("cpu"))
