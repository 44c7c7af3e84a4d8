# Runs inside GDB (gdb -x gdb_probe.py): a test helper, not the plugin. It dumps what a test
# asks for as JSON, so the test can compare it with values it computes on its own.
#   python probe_dump("/tmp/out.json")
# reads the list in the PROBE_READS environment variable: [[name, address_expression, length], ...]
# and writes {"frame": function name, "regs": {...}, "mem": {name: hex}, "addr": {name: int}}.
import json
import os

import gdb


def _frame_name():
    try:
        return gdb.selected_frame().name()
    except gdb.error:
        return None


def _regs():
    out = {}
    for name in ("pc", "sp", "lr", "xpsr"):
        try:
            out[name] = int(gdb.parse_and_eval("$" + name)) & 0xFFFFFFFFFFFFFFFF
        except gdb.error:
            pass
    return out


def probe_dump(path):
    reads = json.loads(os.environ.get("PROBE_READS", "[]"))
    inferior = gdb.selected_inferior()
    result = {"frame": _frame_name(), "regs": _regs(), "mem": {}, "addr": {}}
    for name, expr, length in reads:
        try:
            addr = int(gdb.parse_and_eval(expr).cast(gdb.lookup_type("unsigned long long")))
            result["addr"][name] = addr
            result["mem"][name] = inferior.read_memory(addr, length).tobytes().hex()
        except (gdb.error, gdb.MemoryError) as exc:
            result["mem"][name] = None
            result["addr"].setdefault(name, None)
            result.setdefault("errors", {})[name] = str(exc)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(result, f)
