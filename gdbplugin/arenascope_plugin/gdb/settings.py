"""`set arena NAME VALUE` / `show arena [NAME]`: GDB's parameters, generated from the one
settings table (settings_table.TABLE: each setting's type, default, doc, check and parse).
A setting's check runs when it is set (a bad value is refused and the old one kept); its parse
when it is used (expressions are evaluated by GDB then: they may need a running target).
resolved() turns them into the pipeline's Settings."""
import gdb  # pylint: disable=import-error

from arenascope_plugin import pipeline, settings_table
from arenascope_plugin.acquire.gdbtarget import parse_address
from arenascope_plugin.settings_table import parse_tool

# The GDB parameter kind of each settings_table type.
KIND = {"string": gdb.PARAM_STRING, "bool": gdb.PARAM_BOOLEAN, "auto-bool": gdb.PARAM_AUTO_BOOLEAN,
        "uint": gdb.PARAM_ZUINTEGER}


class GdbEvaluator:
    """settings_table.Evaluator on GDB: C expressions evaluated on the target (parse_address)."""

    @staticmethod
    def address(text):
        return parse_address(text)

    @staticmethod
    def value(text):
        return parse_address(text)


class _Setting(gdb.Parameter):
    """A `set arena NAME` / `show arena NAME` parameter: one settings_table.Setting."""

    def __init__(self, spec):
        self.__doc__ = spec.doc
        self.set_doc = f"Set {spec.show}."
        self.show_doc = f"Show {spec.show}."
        super().__init__(f"arena {spec.name}", gdb.COMMAND_DATA, KIND[spec.type])
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


PARAMS = {}  # name: its _Setting, in the table's order (`show arena`'s)
ON_CHANGE = []  # called when what a gather reads changes (changed()): what was read before is stale (stopcache)


def changed():
    """A setting took a new value, or `arena attach` / `arena dump` changed what is read."""
    for hook in ON_CHANGE:
        hook()


def register(table=None):
    """Creates the GDB parameters of the settings in table (settings_table.TABLE by default;
    the `set arena` / `show arena` prefixes once). A name already registered is kept."""
    if not PARAMS:
        _SetArena()
        _ShowArena()
    for spec in settings_table.TABLE if table is None else table:
        if spec.name not in PARAMS:
            PARAMS[spec.name] = _Setting(spec)


def setting(name):
    """The setting's value as set (str; bool, None for auto, int as its type makes it)."""
    return PARAMS[name].value


def value(name):
    """The setting's value as the table's parse makes it (expressions evaluated by GDB now)."""
    param = PARAMS[name]
    return settings_table.parsed(param._spec, param.value, GdbEvaluator)  # pylint: disable=protected-access


def tool_path(name, folder, executable):
    """The executable a tool path setting names (see settings_table.parse_tool)."""
    return parse_tool(folder, executable)(name, setting(name))


def resolved(interpreter=None, with_fault_sp=True):
    """The pipeline's Settings from the `set arena` values, each parsed by the table now.
    with_fault_sp False: no `set arena fault-sp` (the live view: a value evaluated once would go stale)."""
    values = {name: param.value for name, param in PARAMS.items()}
    if not with_fault_sp:
        values["fault-sp"] = "auto"
    return pipeline.Settings(interpreter=interpreter, **settings_table.pipeline_fields(values, GdbEvaluator))
