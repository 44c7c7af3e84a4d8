"""`arena interpreters`: every tflite::MicroInterpreter of the firmware, numbered for `arena attach
--interpreter N`."""
from arenascope_plugin.acquire.gdbtarget import GdbSymbols
from arenascope_plugin.analyse import agentless
from arenascope_plugin.decode import tflm
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import jsonout


def describe(entry):
    """One line for an interpreter of agentless.list_interpreters."""
    where = f"'{entry['name']}' " if entry["name"] else ""
    if entry["problem"]:
        arenas = f"its arena's bounds are not shown: {entry['problem']}"
    elif not entry["buffers"]:
        arenas = "no allocator yet"
    else:
        arenas = ", ".join(f"{what} {base:#x}+{size}" for what, base, size in entry["buffers"])
    mode = "" if entry["problem"] else "two arenas: " if entry["two_arena"] else "one arena: "
    if entry.get("shares_allocator_with") is not None:
        mode = f"shares its MicroAllocator and arena with [{entry['shares_allocator_with']}]: " + mode
    state = ("AllocateTensors had succeeded" if entry["problem"] else "allocated") if entry["allocated"] else \
        "freed" if entry.get("freed") else "not allocated (AllocateTensors has not succeeded)"
    return f"  [{entry['index']}] {entry['address']:#x} {where}({entry['found_by']}) {mode}{arenas}; {state}"


class InterpretersCommand(Sub):
    """List every tflite::MicroInterpreter in the firmware's RAM (agentless mode).
Found as the agentless walk finds one (the vtable pointer of its embedded MicroInterpreterGraph
in .data/.bss; the typed pointers the ELF's globals hold, `tflite::MicroInterpreter *` globals and
members of global structs; else the start of the heap), in address order; for each: its address,
how it was found, the variable holding it, one arena or
two (MicroAllocator::Create with a persistent and a non-persistent buffer) with their bounds,
and whether AllocateTensors succeeded. The commands show the allocated one at the lowest address unless
`arena attach --interpreter N` (or `arena attach EXPR`) chooses another.

Usage: arena interpreters [--json]
--json: {"attached", "interpreters": [{index, address, name, found_by, two_arena, buffers,
allocated, problem}]} (docs/command-json-schema.json)."""
    sub = "interpreters"
    json_doc = True

    def run(self, args):
        framework.check_readable()  # no target, a lost link, a running core: said as the other commands say it
        symbols = GdbSymbols()
        agentless.require_tflm(symbols, "arena interpreters")
        lay = tflm.layout(symbols)
        found = agentless.list_interpreters(framework.reader(), symbols, lay)
        attached = framework.attached()
        if args.json:
            framework.emit(jsonout.interpreters(attached, found, tflm.layout_json(lay)))
            return
        if not found:
            write(["arena interpreters: no constructed tflite::MicroInterpreter in the ELF's .data/.bss, behind a "
                   "typed pointer of its globals, or at the start of its heap (stop after the interpreters are "
                   "constructed; one elsewhere: `arena attach EXPR`)"])
            return
        lines = [f"arena interpreters: {len(found)} found" +
                 (f"; attached: {attached:#x}" if attached is not None else
                  "; shown: the allocated one at the lowest address (`arena attach --interpreter N` to choose)")
                 + f"; {lay.describe()}"]
        lines += [describe(e) for e in found]
        write(lines)
