"""The plugin's layout (docs/architecture.md, issue 15): only acquire/gdbtarget.py and the gdb/
front end import gdb, each stage imports only the stages below it, there is no import cycle, and
each command has its own file. Read from the sources with ast (no import runs)."""
import ast
import pathlib

PKG = pathlib.Path(__file__).resolve().parents[2] / "gdbplugin" / "arenascope_plugin"
GDB_ALLOWED = {"acquire.gdbtarget"}


def modules():
    """{dotted name under the package: set of package modules it imports}, and who imports gdb."""
    deps, gdb_users = {}, set()
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).with_suffix("")
        name = ".".join(p for p in rel.parts if p != "__init__") or "__init__"
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for n in names:
                if n == "gdb" or n.startswith("gdb."):
                    gdb_users.add(name)
                elif n.startswith("arenascope_plugin."):
                    dotted = n[len("arenascope_plugin."):]
                    if (PKG / (dotted.replace(".", "/") + ".py")).exists() or \
                            (PKG / dotted.replace(".", "/") / "__init__.py").exists():
                        found.add(dotted)
        deps[name] = found - {name}
    return deps, gdb_users


def test_only_the_gdb_reader_and_the_gdb_front_end_import_gdb():
    _, users = modules()
    outside = sorted(u for u in users if u not in GDB_ALLOWED and u != "gdb" and not u.startswith("gdb."))
    assert not outside, f"these modules import gdb: {outside}"
    assert "acquire.gdbtarget" in users and "gdb.framework" in users  # the test sees imports at all


def test_no_import_cycle():
    deps, _ = modules()
    # A package's __init__ importing its own modules is not a cycle of the layout.
    graph = {m: {d for d in ds if not m.startswith(d + ".") and d != m.rsplit(".", 1)[0]}
             for m, ds in deps.items()}
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(d):] + [d]))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = "done"
    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert len(graph) > 40


def test_the_stages_import_only_what_is_below_them():
    """acquire < decode < ports < analyse < present < pipeline < serve < the front ends (cli, gdb).
    The architecture ports' registry (ports/__init__.py, which imports no module when loaded) is
    the one thing below it that acquire's readers ask: the register names to read."""
    order = ["errors", "version", "paths", "acquire", "decode", "ports", "analyse", "present", "pipeline", "serve",
             "cli", "gdb"]
    deps, _ = modules()

    def rank(m):
        return order.index(m.split(".")[0])
    wrong = [(m, d) for m, ds in deps.items() for d in ds if m.split(".")[0] in order and d.split(".")[0] in order
             and rank(d) > rank(m) and not (m.startswith("acquire.") and d == "ports")]
    assert not wrong, wrong
    registry = ast.parse((PKG / "ports" / "__init__.py").read_text())
    assert not [n for n in registry.body if isinstance(n, (ast.Import, ast.ImportFrom))
                and (getattr(n, "module", "") or "").startswith("arenascope_plugin")], \
        "ports/__init__.py imports a module when loaded"


def test_one_file_per_command():
    import re
    for path in sorted((PKG / "gdb").glob("cmd_*.py")):
        commands = re.findall(r"^class (\w+)\((?:Sub|gdb\.Command)\)", path.read_text(), re.M)
        assert len(commands) == 1, (path.name, commands)


# What present/ may not import (issue 33): the stages that read target memory or decide a
# verdict. Reports render what pipeline.gather and analyse/diagnosis computed, once.
PRESENT_FORBIDDEN = {"analyse.faults", "analyse.postmortem", "analyse.agentless", "analyse.diagnosis",
                     "analyse.bands", "acquire.reader", "acquire.gdbtarget", "acquire.openocd", "acquire.rsp",
                     "acquire.dump", "acquire.dumped", "acquire.dumpcore", "acquire.unwind", "acquire.symbols",
                     "acquire.elfsymbols", "pipeline"}


def test_present_reads_no_memory_and_decides_no_verdict():
    deps, _ = modules()
    present = {m: ds for m, ds in deps.items() if m.startswith("present.")}
    assert "present.textreports" in present  # the test sees present/ at all
    bad = {m: sorted(ds & PRESENT_FORBIDDEN) for m, ds in present.items() if ds & PRESENT_FORBIDDEN}
    assert not bad, f"present/ modules importing readers or deciders: {bad}"
