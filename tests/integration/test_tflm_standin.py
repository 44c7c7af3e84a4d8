"""Agentless post-mortem on the TFLM STAND-IN (examples/tflm_standin/, NOT TensorFlow Lite Micro):
a Cortex-M4 firmware with TFLM 90b983c2's class and member names, whose arena is laid out by
re-enacting the allocation steps arenascope-plan predicts, run on real QEMU mps2-an386 under real
gdb-multiarch with the plugin. CI cannot build real TFLM; this is where the broken states are
tested: healthy, AllocateTensors failed with the status checked, failed with the status ignored,
and the stack run into the arena's tail (with CubeMX's HardFault loop, and with a handler that
saves the SP).

Every expected figure is computed here: from `arenascope-plan --json` on the demo's model (the one
the stand-in is built for), a replay of its steps written here from the rules arena-budget.md
states, and the ELF's symbol table (pyelftools); never from the plugin."""
import json
import os
import pathlib
import re
import runpy
import subprocess
import tempfile

import pytest

from harness import BUILD, DEMO_MODEL, PLANNER, ROOT, elf_symbols, figure, gdb_batch, plan_json, qemu

ELF = BUILD / "firmware" / "tflm_standin" / "tflm_standin_fw.elf"
PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
COMMANDS = ["info", "check", "fault", "map", "regions", "stack"]
BAD = re.compile(r"cannot read|Cannot access memory|Traceback|Python Exception|internal error|"
                 r"AttributeError|KeyError|TypeError", re.I)
# TFLM 90b983c2's sizes on the Cortex-M4 (TFLM-INTERNALS.md, "Measured layouts"): the planner
# sizes the tail with them.
TFLM_SIZES = {"tflite::MicroAllocator": 36, "tflite::SingleArenaBufferAllocator": 36,
              "tflite::GreedyMemoryPlanner": 44, "TfLiteEvalTensor": 12, "tflite::NodeAndRegistration": 32,
              "TfLiteTensor": 32, "tflite::SubgraphAllocations": 8, "tflite::ScratchBufferHandle": 4,
              "tflite::MicroInterpreter": 208}
HELPER = '''
import os
import gdb

def standin_run(outdir, name, cmd):
    """Runs cmd with its output logged to OUTDIR/NAME.txt; a gdb.error is appended to it (after
    what the command printed) instead of ending the batch."""
    path = os.path.join(outdir, name + ".txt")
    for setting in ("overwrite on", "redirect on", "file " + path, "enabled on"):
        gdb.execute("set logging " + setting)
    error = None
    try:
        gdb.execute(cmd)
    except gdb.error as e:
        error = str(e)
    finally:
        gdb.execute("set logging enabled off")
    if error is not None:
        with open(path, "a") as f:
            f.write("\\n[gdb.error] " + error + "\\n")
'''

pytestmark = pytest.mark.skipif(not ELF.exists(), reason=f"{ELF} not built (bash tools/build.sh)")


@pytest.fixture(scope="module")
def plan():
    """The planner's JSON for the stand-in's model, as the build runs it (default margin)."""
    return plan_json()


@pytest.fixture(scope="module")
def symbols():
    return elf_symbols(ELF)


def align_down(x, a):
    return x // a * a


def align_up(x, a):
    return -(-x // a) * a


def replay(steps, size):
    """The planner's steps against an arena of `size` bytes, by the rules arena-budget.md and
    TFLM's allocator state (offsets from the arena's start): (failed step or None, what TFLM
    prints for it, head, temp, tail)."""
    head = temp = 0
    tail = size
    for s in steps:
        k, b, a = s["kind"], s["bytes"], s["align"]
        if k == "persistent":
            at = align_down(tail - b, a)
            if at < head:
                return s, (f"Failed to allocate tail memory. Requested: {b}, available {b - (head - at)}, missing: "
                           f"{head - at}"), head, temp, tail
            tail = at
        elif k == "temp":
            at = align_up(temp, a)
            if tail - at < b:
                avail = max(tail - at, 0)
                return s, f"Failed to allocate temp memory. Requested: {b}, available {avail}, missing: {b - avail}", \
                    head, temp, tail
            temp = at + b
        elif k == "reset-temp":
            temp = head
        elif k in ("resize-head", "reserve-head"):
            at = align_up(0, a)
            if tail - at < b:
                if s["fatal"]:
                    avail = max(tail - at, 0)
                    return s, f"Failed to resize buffer. Requested: {b}, available {avail}, missing: {b - avail}", \
                        head, temp, tail
                continue
            head = temp = at + b
        elif k == "planner-arrays":
            remaining = align_down(tail, 16) - align_up(temp, 16)
            if remaining < 0 or remaining // 40 < s["count"]:
                return s, f"Too many buffers (max is {max(remaining, 0) // 40})", head, temp, tail
            temp = align_up(temp, 16) + remaining
    return None, None, head, temp, tail


def tail_objects(plan, base):
    """{what: address} of the tail's objects at the recommended size (the stand-in's arena)."""
    return {t["what"]: base + t["offset"] for t in plan["tail"]["regions"]}


def session(scenario, stops, arena_bytes=None, extra_sets=(), elf=ELF, saba_offset=None):
    """Boots the stand-in on QEMU, sets the scenario at standin_boot(), then for each stop
    (a list of GDB commands that stop the core) loads the plugin and runs every arena command,
    logged per command. Returns ([{command: output}] per stop, the UART's output, GDB's output)."""
    with tempfile.TemporaryDirectory() as tmp, qemu(elf) as (port, uart):
        tmp = pathlib.Path(tmp)
        (tmp / "helper.py").write_text(HELPER)
        cmds = ["set pagination off", "set confirm off", "break standin_boot", "continue",
                f"set var standin_scenario = {scenario}", *extra_sets]
        if arena_bytes is not None:
            cmds.append(f"set var standin_arena_bytes = {arena_bytes}")
        cmds += [f"source {PLUGIN}", f"set arena planner-path {PLANNER}", "set arena colour off",
                 f"source {tmp / 'helper.py'}"]
        for n, stop in enumerate(stops):
            cmds += stop
            cmds.append(f"python standin_run('{tmp}', 'where{n}', 'info registers pc sp lr')")
            for c in COMMANDS:
                cmds.append(f"python standin_run('{tmp}', '{c}{n}', 'arena {c}')")
            cmds.append(f"python standin_run('{tmp}', 'whereis{n}', 'arena whereis {{WHEREIS}}')")
            cmds.append(f"python standin_run('{tmp}', 'snapshot{n}', 'arena snapshot {tmp}/snap{n}.json')")
        syms = elf_symbols(elf)
        saba = syms["tensor_arena"] + (standin_plan_cache()["saba_offset"] if saba_offset is None else saba_offset)
        cmds = [c.replace("{WHEREIS}", f"{saba:#x}") for c in cmds]
        _dump, text = gdb_batch(elf, cmds, remote_port=port, timeout=60)
        out = []
        for n in range(len(stops)):
            got = {c: (tmp / f"{c}{n}.txt").read_text() if (tmp / f"{c}{n}.txt").exists() else ""
                   for c in ["where", *COMMANDS, "whereis", "snapshot"]}
            snap = tmp / f"snap{n}.json"
            got["snap"] = json.loads(snap.read_text()) if snap.exists() else None
            out.append(got)
        return out, uart.read_text(errors="replace"), text


_PLAN = {}


def standin_plan_cache():
    if not _PLAN:
        doc = plan_json()
        _PLAN["doc"] = doc
        _PLAN["saba_offset"] = next(t["offset"] for t in doc["tail"]["regions"]
                                    if t["role"] == "arena-allocator")
    return _PLAN


def assert_clean(stop, text):
    """No command ended in a bare read error or an internal error, and each printed something."""
    for c in [*COMMANDS, "whereis", "snapshot"]:
        assert stop[c].strip(), f"`arena {c}` printed nothing:\n{text[-3000:]}"
        assert not BAD.search(stop[c]), f"`arena {c}` ended in an error:\n{stop[c]}"
    assert stop["snap"] is not None and "tflm" in stop["snap"], stop["snapshot"]



def test_sizes_equal_tflm(plan):
    """The stand-in's types have TFLM's sizes on the Cortex-M4 (DWARF, as the plugin reads them),
    and the planner's constructor steps request those sizes."""
    script = "; ".join(f"print('{t}', gdb.lookup_type('{t}').strip_typedefs().sizeof)" for t in TFLM_SIZES)
    r = subprocess.run(["gdb-multiarch", "-q", "-nx", "-batch", "-ex", f"python {script}", str(ELF)],
                       capture_output=True, text=True, timeout=60)
    got = {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in r.stdout.splitlines() if " " in line}
    assert got == TFLM_SIZES, r.stdout + r.stderr
    ctor = {s["what"]: s["bytes"] for s in plan["steps"] if s["phase"].startswith("MicroInterpreter constructor")}
    assert ctor == {"SingleArenaBufferAllocator": 36, "GreedyMemoryPlanner": 44, "MicroAllocator": 36}


def test_healthy(plan, symbols):
    [stop], uart, text = session(0, [["break inference_done", "continue"]])
    assert_clean(stop, text)
    assert "AllocateTensors ok" in uart and "Failed" not in uart, uart
    info = stop["info"]
    assert figure(info, "head (planned)") == plan["plans"]["tflm-greedy"]["head_bytes"]
    assert figure(info, "tail (persistent)") == plan["tail"]["bytes"]
    assert figure(info, "used") == plan["arena"]["arena_used_bytes"]
    a = stop["snap"]["arenas"][0]
    assert a["base_addr"] == symbols["tensor_arena"] and a["size_bytes"] == plan["arena"]["recommended_bytes"]
    assert (a["head_bytes"], a["tail_bytes"], a["used_bytes"]) == \
        (plan["plans"]["tflm-greedy"]["head_bytes"], plan["tail"]["bytes"], plan["arena"]["arena_used_bytes"])
    assert stop["snap"]["tflm"]["condition"] == "allocated"
    assert "PASS" in stop["check"] and "FAIL" not in stop["check"], stop["check"]
    assert "owned by SingleArenaBufferAllocator" in stop["whereis"], stop["whereis"]
    # Every planned tensor where the plan puts it, as the plugin walked TFLM's eval tensors.
    offsets = {(r["name"], r["offset"]) for r in a["regions"] if r.get("kind") == "tensor"}
    assert offsets == {(b["name"], b["offset"]) for b in plan["buffers"] if b["tensor"] >= 0}


def test_undersized_status_checked(plan):
    size = plan["arena"]["minimum_bytes"] - 300
    failed, message, head, temp, tail = replay(plan["steps"], size)
    assert failed is not None
    [stop], uart, text = session(1, [["break allocation_failed", "continue"]], arena_bytes=size)
    assert_clean(stop, text)
    assert message in uart and "AllocateTensors ok" not in uart, uart
    assert "VERDICT: AllocateTensors did not finish" in stop["fault"], stop["fault"]
    assert f"{plan['arena']['minimum_bytes'] - size} B short" in stop["fault"], stop["fault"]
    assert "allocation_failed" in stop["where"]
    # Frozen as TFLM leaves it: the target's allocator where the replay stopped.
    assert figure(stop["info"], "tail (persistent)") == size - tail
    assert stop["snap"]["tflm"]["condition"] == "unfinished"
    assert [v["kind"] for v in stop["snap"]["tflm"]["verdicts"]] == ["allocation-failed"]
    # The planner's replay at this very size (--arena-size) names the request and the frozen state.
    assert f"TFLM prints \"{message}\"" in stop["fault"], stop["fault"]
    assert "the target's allocator is frozen exactly where the replay stops" in stop["fault"], stop["fault"]
    # The tail objects TFLM made before it stopped, where the replay puts them (the end is unaligned).
    assert "SingleArenaBufferAllocator (predicted)" in stop["regions"], stop["regions"]


def test_undersized_status_ignored(plan):
    """input(0)->data.int8[0] = 0 with input_tensors_ null: QEMU reads address 0 (the initial SP,
    __StackTop), then that + 16 (zero RAM), and stores byte 0 at address 0, in the vector table:
    no fault. The next Invoke calls AllocateTensors again, StartModelAllocation refuses, and the
    app calls invoke_failed(). Stopped in that Invoke, then in invoke_failed()."""
    size = plan["arena"]["minimum_bytes"] - 300
    _failed, message, *_ = replay(plan["steps"], size)
    stops, uart, text = session(2, [["break tflite::MicroInterpreter::Invoke", "continue"],
                                    ["delete", "break invoke_failed", "continue"]], arena_bytes=size)
    for stop in stops:
        assert_clean(stop, text)
    assert message in uart, uart
    assert "Model allocation started before finishing previously allocated model" in uart, uart
    assert "Failed starting model allocation." in uart, uart
    in_invoke, at_failed = stops
    assert "VERDICT: AllocateTensors failed and the application went on" in in_invoke["fault"], in_invoke["fault"]
    assert "invoke_failed" in at_failed["where"]
    assert f"{plan['arena']['minimum_bytes'] - size} B short" in at_failed["fault"], at_failed["fault"]
    # After Invoke returned: initialization_status_, set by the retry, shows the failure was ignored.
    assert "VERDICT: AllocateTensors failed and the application went on" in at_failed["fault"], at_failed["fault"]
    assert "AllocateTensors ran again after its first failure" in at_failed["fault"], at_failed["fault"]


@pytest.mark.parametrize("scenario,stop", [(3, "HardFault_Handler"), (4, "standin_fault_loop")])
def test_stack_into_arena(plan, symbols, scenario, stop):
    [got], uart, text = session(scenario, [[f"hbreak {stop}", "continue"]])
    assert_clean(got, text)
    assert "AllocateTensors ok" in uart and "recursion returned" in uart, uart
    assert "invoke after the recursion returned" not in uart, uart
    fault = got["fault"]
    assert "VERDICT: the stack ran into the arena" in fault, fault
    assert "HardFault" in fault and "HFSR.FORCED" in fault, fault
    # The tail's top objects, which the ~200 B overrun covers whole, named at their addresses.
    objects = tail_objects(plan, symbols["tensor_arena"])
    limit = symbols["__StackLimit"]
    assert symbols["tensor_arena"] + plan["arena"]["recommended_bytes"] == limit
    top = {w: a for w, a in objects.items() if a >= limit - 150}   # wholly inside the top 150 B
    assert {"SingleArenaBufferAllocator", "GreedyMemoryPlanner", "MicroAllocator"} <= set(top)
    for what, addr in top.items():
        assert f"overwritten: {what} at {addr:#x}" in fault, fault
    tflm = got["snap"]["tflm"]
    assert tflm["condition"] == "smashed"
    smashed = {(o["name"], o["addr"]) for v in tflm["verdicts"] if v["kind"] == "stack-into-arena"
               for o in v["smashed"]}
    assert set(top.items()) <= smashed, tflm
    # An overwritten planner (its vtable pointer gone) is checked at its full size (TFLM_SIZES).
    planner = objects["GreedyMemoryPlanner"]
    assert f"GreedyMemoryPlanner at {planner:#x} ({TFLM_SIZES['tflite::GreedyMemoryPlanner']} B)" in got["info"], \
        got["info"]
    if scenario == 4:
        assert "saved by the handler" in fault and "g_fault_sp" in fault, fault


def test_stack_into_arena_with_no_paint_left(plan, symbols):
    """A recursion that writes every word of the stack leaves no paint to measure by: the verdict
    comes from the stack values (return addresses) below the stack's limit."""
    [got], _uart, text = session(3, [["hbreak HardFault_Handler", "continue"]],
                                 extra_sets=["set var standin_recursion_fill_all = 1"])
    assert_clean(got, text)
    fault = got["fault"]
    assert "VERDICT: the stack ran into the arena" in fault, fault
    assert "no stack paint left anywhere in the stack" in fault, fault
    assert ", a return address (the instruction before it is a call)" in fault, fault


# The stand-in built in each older TFLM layout era (tflite_standin.h STANDIN_ERA): the class names
# and members real TFLM of that era has (decode/tflm_profile.py), and the allocator objects' sizes
# (sizeof of real TFLM 58aa9833f, 59b39f6cb, 547f8aeab, 5b3670d82 on a Cortex-M4: docs/integrating-tflm.md).
ERAS = {"2023_02": ("tflite::MicroGraph", "SingleArenaBufferAllocator", 36, 36),
        "2022_09": ("tflite::MicroGraph", "SingleArenaBufferAllocator", 40, 40),
        "2022_07": ("tflite::MicroGraph", "SimpleMemoryAllocator", 40, 40),
        "2022_03": ("tflite::MicroGraph", "SimpleMemoryAllocator", 36, 36)}


def era_elf(era):
    elf = BUILD / "firmware" / "tflm_standin" / f"tflm_standin_{era}_fw.elf"
    if not elf.exists():
        pytest.skip(f"{elf} not built (bash tools/build.sh)")
    return elf


@pytest.mark.parametrize("era", sorted(ERAS))
def test_each_era_healthy_and_stack_into_the_tail(era):
    """The walk and the post-mortem of each TFLM era's layout on QEMU: the era named, the arena
    as the planner's replay of that era (`--tflm`) lays it out, and the stack's overrun naming
    that era's objects at their addresses."""
    graph, arena_allocator, arena_allocator_size, micro_allocator_size = ERAS[era]
    elf = era_elf(era)
    era_id = era.replace("_", "-")
    plan = plan_json("--tflm", era_id)
    assert plan["tflm"]["revision"] == era_id
    sizes = subprocess.run(["gdb-multiarch", "-q", "-nx", "-batch", "-ex",
                            f"python print(gdb.lookup_type('tflite::{arena_allocator}').sizeof, "
                            "gdb.lookup_type('tflite::MicroAllocator').sizeof)", str(elf)],
                           capture_output=True, text=True, timeout=60).stdout.split()
    assert sizes == [str(arena_allocator_size), str(micro_allocator_size)], sizes
    ctor = {s["what"]: s["bytes"] for s in plan["steps"] if s["phase"].startswith("MicroInterpreter constructor")}
    assert ctor == {arena_allocator: arena_allocator_size, "GreedyMemoryPlanner": 44,
                    "MicroAllocator": micro_allocator_size}
    syms = elf_symbols(elf)
    assert graph == "tflite::MicroGraph" and "_ZTVN6tflite10MicroGraphE" in syms   # a concrete graph, virtual
    assert "_ZTVN6tflite21MicroInterpreterGraphE" not in syms
    saba = next(t["offset"] for t in plan["tail"]["regions"] if t["role"] == "arena-allocator")
    [healthy], uart, text = session(0, [["break inference_done", "continue"]], elf=elf, saba_offset=saba)
    assert_clean(healthy, text)
    assert "AllocateTensors ok" in uart, uart
    assert f"TFLM {era_id} layout" in healthy["info"], healthy["info"]
    snap = healthy["snap"]
    assert snap["tflm"]["layout"]["id"] == era_id and snap["tflm"]["condition"] == "allocated"
    a = snap["arenas"][0]
    assert (a["head_bytes"], a["tail_bytes"], a["used_bytes"]) == \
        (plan["plans"]["tflm-greedy"]["head_bytes"], plan["tail"]["bytes"], plan["arena"]["arena_used_bytes"])
    top = {r["name"]: (r["offset"], r["size_bytes"]) for r in a["regions"] if r["kind"] == "metadata"}
    for t in plan["tail"]["regions"][:3]:
        assert top[t["what"]] == (t["offset"], t["size"]), (t, top)
    assert f"owned by {arena_allocator}" in healthy["whereis"], healthy["whereis"]
    [stack], uart, text = session(3, [["hbreak HardFault_Handler", "continue"]], elf=elf, saba_offset=saba)
    assert_clean(stack, text)
    fault = stack["fault"]
    assert "VERDICT: the stack ran into the arena" in fault, fault
    objects = tail_objects(plan, syms["tensor_arena"])
    top = {w: addr for w, addr in objects.items() if addr >= syms["__StackLimit"] - 150}
    assert {arena_allocator, "GreedyMemoryPlanner", "MicroAllocator"} <= set(top), top
    for what, addr in top.items():
        assert f"overwritten: {what} at {addr:#x}" in fault, fault


@pytest.mark.parametrize("era", sorted(ERAS))
def test_each_era_allocate_tensors_failed_returned_hung_crashed_and_ignored(era):
    """AllocateTensors failing in each era's layout (300 B under the era's minimum): returned (the
    era's message, phase and shortfall, frozen where `--tflm ERA`'s replay stops), hung in
    AbortImpl, crashed on the null, and ignored by the application."""
    elf = era_elf(era)
    plan = plan_json("--tflm", era.replace("_", "-"))
    size = plan["arena"]["minimum_bytes"] - 300
    failed, message, *_ = replay(plan["steps"], size)
    assert failed is not None
    saba = next(t["offset"] for t in plan["tail"]["regions"] if t["role"] == "arena-allocator")
    cases = [(1, "break allocation_failed", 0, "it returned kTfLiteError"),
             (1, "break *((char*)AbortImpl + 8)", 1, "TFLM hangs inside it"),
             (1, "hbreak HardFault_Handler", 2, "TFLM crashed inside it"),
             (2, "break invoke_failed", 0, "AllocateTensors failed and the application went on")]
    for scenario, stop, on_failure, said in cases:
        [got], uart, text = session(scenario, [[stop, "continue"]], arena_bytes=size, elf=elf, saba_offset=saba,
                                    extra_sets=[f"set var standin_on_failure = {on_failure}"])
        assert_clean(got, text)
        fault = got["fault"]
        assert said in fault, (stop, fault)
        assert f"{plan['arena']['minimum_bytes'] - size} B short" in fault, fault
        if on_failure == 0 and scenario == 1:
            assert message in uart, uart
            assert f"TFLM prints \"{message}\"" in fault and "frozen exactly where the replay stops" in fault, fault


def test_a_heap_arena_and_an_interpreter_made_in_the_heap(plan):
    """Issue 35: the arena and the interpreter taken from the heap (no data object of the ELF holds
    them; the linker script bounds the heap by __HeapBase/__HeapLimit): the interpreter is found
    in the heap, the arena's bounds are TFLM's own, and nothing is called damaged or out of RAM."""
    elf = BUILD / "firmware" / "tflm_standin" / "tflm_standin_heap_fw.elf"
    if not elf.exists():
        pytest.skip(f"{elf} not built (bash tools/build.sh)")
    syms = elf_symbols(elf)
    heap = (syms["__HeapBase"], syms["__HeapLimit"])
    [got], uart, text = session(0, [["break inference_done", "continue"]], elf=elf)
    assert_clean(got, text)
    assert "AllocateTensors ok" in uart, uart
    assert "(a scan of the heap for the MicroInterpreterGraph vtable)" in got["info"], got["info"]
    a = got["snap"]["arenas"][0]
    base = align_up(heap[0], 16)   # the stand-in's bump allocator aligns to 16
    assert (a["base_addr"], a["size_bytes"]) == (base, plan["arena"]["recommended_bytes"]), a
    assert (a["head_bytes"], a["tail_bytes"], a["used_bytes"]) == \
        (plan["plans"]["tflm-greedy"]["head_bytes"], plan["tail"]["bytes"], plan["arena"]["arena_used_bytes"])
    assert base + a["size_bytes"] <= heap[1]
    assert "arena check: PASS" in got["check"] and "the heap (__HeapBase/__HeapLimit)" in got["check"], got["check"]
    assert "OVERWRITTEN" not in got["regions"] and "overwritten" not in got["fault"], got["fault"]


def test_an_arena_and_interpreter_in_external_ram():
    """Issue 35, items 1 and 2: the arena and the interpreter in QEMU's PSRAM (0x21000000, which no
    ELF section covers), held only through a member of a user struct. The interpreter is found
    through that typed pointer; with nothing naming the PSRAM its span is counted as memory (named
    with the advice), never as damage; named with `set arena memory` or GDB's own `mem` regions,
    every answer names it, and the stack rule says the stack cannot run into it."""
    elf = BUILD / "firmware" / "tflm_standin" / "tflm_standin_extram_fw.elf"
    if not elf.exists():
        pytest.skip(f"{elf} not built (bash tools/build.sh)")
    plan = standin_plan_cache()["doc"]
    size = plan["arena"]["recommended_bytes"]
    base, interpreter = 0x21000000, align_up(0x21000000 + size, 16)  # the stand-in's bump allocator
    stop = ["break inference_done", "continue"]
    named = ["set arena memory psram 0x21000000 0x22000000", *stop]
    gdb_mem = ["set mem inaccessible-by-default off", "mem 0x21000000 0x22000000 rw", *stop]
    for setup, memory in ((stop, f"memory the ELF does not describe ({base:#x}-"), (named, "psram (named by the user)"),
                          (gdb_mem, "GDB's `mem` regions, 0x21000000-0x22000000")):
        [got], uart, text = session(0, [setup], elf=elf)
        assert_clean(got, text)
        assert "AllocateTensors ok" in uart, uart
        assert f"the MicroInterpreter at {interpreter:#x} (the pointer standin_app.slots[1].interpreter)" in \
            got["info"], got["info"]
        a = got["snap"]["arenas"][0]
        assert (a["base_addr"], a["size_bytes"], a["used_bytes"]) == (base, size, plan["arena"]["arena_used_bytes"])
        assert "arena check: PASS" in got["check"] and f"lies in {memory}" in got["check"], got["check"]
        assert f"the arena is in {memory}" in got["check"] and "apart from the stack's memory" in got["check"]
        assert "overwritten" not in got["fault"] + got["regions"] and "no memory of the ELF" not in got["info"]


def test_a_per_inference_arena_freed_between_inferences_and_moved():
    """Issue 35, item 3: the arena and the interpreter malloc'd (newlib nano) for each inference and
    freed after it, as Edge Impulse's SDK does; a buffer kept after the first inference makes the
    second arena land elsewhere. Inside an inference the arena is TFLM's own; between inferences
    the interpreter is said to be freed (newlib's free list), never read as live or damaged; at the
    next inference the arena is said to have moved, and the snapshot carries where from."""
    elf = BUILD / "firmware" / "tflm_standin" / "tflm_standin_per_inference_fw.elf"
    if not elf.exists():
        pytest.skip(f"{elf} not built (bash tools/build.sh)")
    plan = standin_plan_cache()["doc"]
    size = plan["arena"]["recommended_bytes"]
    where = ["print/x standin_arena_at"]
    stops = [["break inference_done", "break between_inferences", "continue", *where], ["continue"],
             ["continue", *where]]
    (first, between, second), uart, text = session(0, stops, elf=elf)
    at = [int(v, 16) for v in re.findall(r"^\$\d+ = (0x[0-9a-f]+)$", text, re.M)]
    assert len(at) == 2 and at[0] != at[1], text[-2000:]
    assert_clean(first, text)
    a = first["snap"]["arenas"][0]
    assert (a["base_addr"], a["size_bytes"], a["used_bytes"]) == (at[0], size, plan["arena"]["arena_used_bytes"])
    assert "moved_from" not in a and "moved" not in first["info"]
    freed = "is in freed heap memory (the C library's free list, __malloc_free_list, holds"
    assert freed in between["info"], between["info"]
    assert "no interpreter is alive now" in between["info"] and "overwritten" not in between["fault"]
    assert_clean(second, text)
    assert f"the arena moved since the last look ({at[0]:#x}+{size} -> {at[1]:#x}+{size})" in second["info"]
    b = second["snap"]["arenas"][0]
    assert (b["base_addr"], b["moved_from"]) == (at[1], at[0]), b


def measure_with_the_tool(elf):
    """tools/measure_tflm_layouts.py's entry for an ELF built with -g (what it would commit)."""
    return runpy.run_path(str(ROOT / "tools" / "measure_tflm_layouts.py"))["measure"](str(elf), "the stand-in with -g")


def test_tflm_without_debug_information():
    """Issue 35, item 4: the stand-in's TFLM part built -g0 and the application -g (a prebuilt
    TFLM library): the classes with vtables are only declared. With the profile's measurements of
    real TFLM, whose vtables are larger than the stand-in's, the plugin refuses, saying why and what
    to do, and `arena stack` still answers; with a layout measured by the tool on the stand-in's -g
    build, every command reads the -g0 build as the -g one: the same regions, said to come from
    the measured layout."""
    elf = BUILD / "firmware" / "tflm_standin" / "tflm_standin_nodebug_fw.elf"
    if not elf.exists():
        pytest.skip(f"{elf} not built (bash tools/build.sh)")
    stop = ["break inference_done", "continue"]
    [refused], uart, text = session(0, [stop], elf=elf)
    assert "AllocateTensors ok" in uart, uart
    for c in ("info", "regions", "map", "check"):
        assert "TFLM built without -g" in refused[c] and "Rebuild TFLM with -g" in refused[c], refused[c]
        assert "vtable for tflite::MicroAllocator is 20 B, measured 76 B" in refused[c], refused[c]
        assert not BAD.search(refused[c]), refused[c]
    assert "peak depth:" in refused["stack"] and not BAD.search(refused["stack"]), refused["stack"]

    [with_g], _, _ = session(0, [stop])
    entry = measure_with_the_tool(ELF)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write("from arenascope_plugin.decode import tflm_profile\n"
                f"tflm_profile.MEASURED[:] = [{entry!r}]\n")
    try:
        [got], _, text = session(0, [[f"python exec(open('{f.name}').read())", *stop]], elf=elf)
    finally:
        os.unlink(f.name)
    assert_clean(got, text)
    assert "layout: arenascope's layout of TFLM 2026-08 measured on the stand-in with -g (arm-eabi)" in got["info"]
    source = got["snap"]["tflm"]["layout"]["source"]
    assert source["from"] == "measured" and "tflite::MicroAllocator" in source["undescribed"], source

    def regions(stop):
        return [(r["offset"], r["size_bytes"], r["kind"], r["name"]) for r in stop["snap"]["arenas"][0]["regions"]]
    assert regions(got) == regions(with_g) and len(regions(got)) > 20
    for k in ("base_addr", "size_bytes", "head_bytes", "tail_bytes", "used_bytes"):
        assert got["snap"]["arenas"][0][k] == with_g["snap"]["arenas"][0][k], k
    assert "arena check: PASS" in got["check"], got["check"]


AGENT_ELF = BUILD / "firmware" / "tflm_standin" / "tflm_standin_agent_fw.elf"


@pytest.mark.skipif(not AGENT_ELF.exists(), reason=f"{AGENT_ELF} not built")
def test_undersized_with_the_agent(plan):
    """The same failure with the arenascope agent linked in: the app publishes its arena only
    after AllocateTensors succeeds, so the descriptor holds none; the post-mortem reads TFLM's
    objects beside the agent and gives the same verdict."""
    size = plan["arena"]["minimum_bytes"] - 300
    _failed, message, *_ = replay(plan["steps"], size)
    [stop], uart, text = session(1, [["break allocation_failed", "continue"]], arena_bytes=size, elf=AGENT_ELF)
    assert_clean(stop, text)
    assert "(symbol arenascope_descriptor)" in stop["info"] and "no arena published yet" in stop["info"]
    assert "VERDICT: AllocateTensors did not finish: it returned kTfLiteError" in stop["fault"], stop["fault"]
    assert f"TFLM prints \"{message}\"" in stop["fault"] and f"{plan['arena']['minimum_bytes'] - size} B short" in \
        stop["fault"], stop["fault"]
    assert "FAIL  tflm" in stop["check"]
    assert [v["kind"] for v in stop["snap"]["tflm"]["verdicts"]] == ["allocation-failed"]


def elf_objects(elf):
    """Symbol name -> (address, size) of the ELF's data objects (pyelftools)."""
    from elftools.elf.elffile import ELFFile
    with open(elf, "rb") as f:
        e = ELFFile(f)
        return {s.name: (s["st_value"], s["st_size"]) for s in e.get_section_by_name(".symtab").iter_symbols()
                if s.name and s["st_info"]["type"] == "STT_OBJECT"}


def test_two_arenas_and_two_interpreters(plan):
    """Scenario 5: the healthy interpreter over `tensor_arena`, and a second one over an allocator
    created in two-arena mode (MicroAllocator::Create(standin_persistent_arena, P,
    standin_non_persistent_arena, N)). `arena interpreters` lists both where the ELF's symbols
    put them; the default is the first allocated in address order; `arena attach --interpreter N`
    selects either; the snapshot of the two-arena one carries both buffers with the bounds the
    ELF gives and the head and tail the planner predicts for these sizes."""
    objs = elf_objects(ELF)
    second, first = objs["_ZZ4mainE6second"][0], objs["_ZZ4mainE11interpreter"][0]
    np_base, np_size = objs["standin_non_persistent_arena"]
    p_base, p_size = objs["standin_persistent_arena"]
    t_base, t_size = objs["tensor_arena"]
    assert np_base % 16 == 0 and p_base % 16 == 0
    by_address = sorted([(second, "second"), (first, "interpreter")])
    index = {name: k for k, (_a, name) in enumerate(by_address)}
    with tempfile.TemporaryDirectory() as tmp, qemu(ELF) as (port, uart):
        tmp = pathlib.Path(tmp)
        (tmp / "helper.py").write_text(HELPER)
        cmds = ["set pagination off", "set confirm off", "break standin_boot", "continue",
                "set var standin_scenario = 5", "break inference_done", "continue", f"source {PLUGIN}",
                f"set arena planner-path {PLANNER}", "set arena colour off", f"source {tmp / 'helper.py'}"]
        runs = [("list", "arena interpreters"), ("default", f"arena snapshot {tmp}/default.json"),
                ("info", "arena info"),
                ("attach2", f"arena attach --interpreter {index['second']}"),
                ("two", f"arena snapshot {tmp}/two.json"), ("regions", "arena regions"),
                ("attach1", f"arena attach --interpreter {index['interpreter']}"),
                ("one", f"arena snapshot {tmp}/one.json"), ("bad", "arena attach --interpreter 2")]
        cmds += [f"python standin_run('{tmp}', '{name}', '{c}')" for name, c in runs]
        _dump, text = gdb_batch(ELF, cmds, remote_port=port, timeout=90)
        out = {name: (tmp / f"{name}.txt").read_text() if (tmp / f"{name}.txt").exists() else "" for name, _ in runs}
        snaps = {n: json.loads((tmp / f"{n}.json").read_text()) for n in ("default", "two", "one")
                 if (tmp / f"{n}.json").exists()}
        uart_text = uart.read_text(errors="replace")
    assert "second interpreter (two arenas): AllocateTensors ok" in uart_text, text[-3000:]
    listing = out["list"]
    assert "arena interpreters: 2 found" in listing, listing
    scan = "(a scan for the MicroInterpreterGraph vtable)"
    assert f"[{index['second']}] {second:#x} 'main::second' {scan} two arenas: non-persistent " \
           f"{np_base:#x}+{np_size}, " \
           f"persistent {p_base:#x}+{align_down(p_size, 16)}; allocated" in listing, listing
    assert f"[{index['interpreter']}] {first:#x} 'main::interpreter' {scan} one arena: arena {t_base:#x}+{t_size}; " \
           "allocated" in listing, listing
    assert snaps["default"]["tflm"]["interpreter_addr"] == by_address[0][0]
    warned = out["default"] + out["info"]
    assert "2 MicroInterpreters in RAM" in warned and "arena attach --interpreter N" in warned, warned
    assert "the non-persistent buffer of TFLM's two-arena mode" in out["info"] or by_address[0][1] != "second"
    assert "the firmware's RAM holds 2 MicroInterpreter(s)" in out["bad"], out["bad"]

    # The two-arena interpreter: both buffers, as the ELF bounds them and the planner predicts.
    r = subprocess.run([str(PLANNER), "--json", "--target", "cortex-m", "--persistent-size", str(p_size),
                        "--non-persistent-size", str(np_size), str(DEMO_MODEL)], capture_output=True, text=True,
                       timeout=60, check=True)
    two = json.loads(r.stdout)["two_arena"]
    snap = snaps["two"]
    assert snap["tflm"]["interpreter_addr"] == second and snap["tflm"]["condition"] == "allocated", snap["tflm"]
    head, tail = snap["arenas"]
    assert (head["memory"], head["base_addr"], head["size_bytes"]) == ("non-persistent", np_base, np_size)
    assert head["head_bytes"] == plan["plans"]["tflm-greedy"]["head_bytes"] == two["non_persistent"]["used_bytes"]
    assert head["tail_bytes"] == 0 and {x["kind"] for x in head["regions"]} == {"tensor"}
    planned = {(b["tensor"], b["offset"]) for b in plan["buffers"] if b["tensor"] >= 0}
    assert {(x["id"], x["offset"]) for x in head["regions"]} == planned
    assert (tail["memory"], tail["base_addr"], tail["size_bytes"]) == ("persistent", p_base, align_down(p_size, 16))
    assert tail["tail_bytes"] == two["persistent"]["used_bytes"]
    assert tail["head_bytes"] == 0
    predicted = {x["what"]: x["offset"] for x in two["tail_regions"]}
    walked = {x["label"]: x["offset"] for x in tail["regions"]}
    for what in ("PersistentArenaBufferAllocator", "NonPersistentArenaBufferAllocator", "GreedyMemoryPlanner",
                 "MicroAllocator", "MicroBuiltinDataAllocator", "subgraph 0: TfLiteEvalTensor[35]"):
        assert walked.get(what) == predicted[what], (what, walked.get(what), predicted[what])
    assert predicted["PersistentArenaBufferAllocator"] == align_down(p_size, 16) - 16
    assert "arena 1: " in out["regions"] and "NonPersistentArenaBufferAllocator" in out["regions"]

    # The one-arena interpreter beside it: unchanged by the other.
    one = snaps["one"]
    assert one["tflm"]["interpreter_addr"] == first
    [arena] = one["arenas"]
    assert "memory" not in arena
    assert (arena["base_addr"], arena["size_bytes"]) == (t_base, t_size)
    assert arena["tail_bytes"] == plan["tail"]["bytes"]


def test_every_command_reads_the_two_arena_interpreter():
    """Scenario 5 with the two-arena interpreter attached: every arena command answers, without
    a read or internal error, and the post-mortem finds TFLM's objects sound."""
    objs = elf_objects(ELF)
    n = 0 if objs["_ZZ4mainE6second"][0] < objs["_ZZ4mainE11interpreter"][0] else 1
    [stop], uart, text = session(5, [["break inference_done", "continue", f"source {PLUGIN}",
                                      f"arena attach --interpreter {n}"]])
    assert_clean(stop, text)
    assert stop["snap"]["tflm"]["condition"] == "allocated", stop["snap"]["tflm"]
    assert [a.get("memory") for a in stop["snap"]["arenas"]] == ["non-persistent", "persistent"]
    assert "arena 1" in stop["info"] and "PASS" in stop["check"], stop["check"]


SABA = "(tflite::SingleArenaBufferAllocator *)main::interpreter.allocator_->non_persistent_buffer_allocator_"
MEMORY_PLANNER = "main::interpreter.allocator_->memory_planner_"


def at_inference_done(steps):
    """Boots the stand-in, stops at its first inference_done and runs each step: a GDB command
    (the test's own writes), or (NAME, CMD) whose output is kept. Returns ({NAME: output}, GDB's output)."""
    with tempfile.TemporaryDirectory() as tmp, qemu(ELF) as (port, _uart):
        tmp = pathlib.Path(tmp)
        (tmp / "helper.py").write_text(HELPER)
        cmds = ["set pagination off", "set confirm off", "break inference_done", "continue", f"source {PLUGIN}",
                f"set arena planner-path {PLANNER}", "set arena colour off", f"source {tmp / 'helper.py'}"]
        cmds += [s if isinstance(s, str) else f"python standin_run('{tmp}', '{s[0]}', '{s[1]}')" for s in steps]
        _dump, text = gdb_batch(ELF, cmds, remote_port=port, timeout=90)
        return {s[0]: (tmp / f"{s[0]}.txt").read_text() for s in steps if not isinstance(s, str)}, text


def test_interpreters_does_not_show_a_smashed_allocators_bounds():
    """The SingleArenaBufferAllocator's vtable pointer overwritten (a write in GDB, by the test):
    `arena interpreters` gives no bounds read from it, and says why."""
    got, text = at_inference_done([f"set var *(unsigned *)({SABA}) = 0xdeadbeef", ("where", f"p {SABA}"),
                                   ("list", "arena interpreters")])
    where, listing = got["where"], got["list"]
    addr = int(where.split(") ")[1].split()[0], 16)
    line = next(ln for ln in listing.splitlines() if ln.startswith("  [0] "))
    assert f"its arena's bounds are not shown: its SingleArenaBufferAllocator at {addr:#x}: its vtable pointer is " \
           "0xdeadbeef, not into tflite::SingleArenaBufferAllocator's vtable" in line, listing
    assert "0xdeadbeef+" not in listing and "Traceback" not in text


def test_two_smashed_tail_objects_are_both_named_and_the_lowest_is_watched():
    """The memory planner's and the SingleArenaBufferAllocator's vtable pointers overwritten (by
    the test, in GDB): `arena info` names both, and `arena fault`'s watchpoint is on the lowest
    overwritten word (the planner's, below the allocator in the tail)."""
    got, text = at_inference_done([("planner", f"p/x (unsigned){MEMORY_PLANNER}"), ("saba", f"p/x (unsigned)({SABA})"),
                                   f"set var *(unsigned *)({SABA}) = 0xdeadbeef",
                                   f"set var *(unsigned *)({MEMORY_PLANNER}) = 0xdeadbeef",
                                   ("info", "arena info"), ("fault", "arena fault")])
    gp, sa = (int(got[n].split("= ")[1], 16) for n in ("planner", "saba"))
    assert gp < sa, got
    for addr, cls in ((gp, "GreedyMemoryPlanner"), (sa, "SingleArenaBufferAllocator")):
        said = f"{cls} at {addr:#x}: its vtable pointer is 0xdeadbeef, not into tflite::{cls}'s vtable"
        assert said in got["info"], got["info"]
    assert f"`watch -l *(unsigned int *){gp:#x}`" in got["fault"], got["fault"]
    assert "Traceback" not in text


def test_interpreters_after_the_stack_ran_into_the_tail_names_the_overwritten_object():
    """Issue 33: after scenario 3's stack overran the tail, `arena interpreters` read pointers
    out of the overwritten objects (an unreadable 0x5a5a5a5e, or "two-arena mode ... build TFLM with
    -g" on real TFLM); it names the first overwritten allocator object instead, and no mode."""
    listing = run_listing(3)
    line = next(ln for ln in listing.splitlines() if ln.startswith("  [0] "))
    assert "its arena's bounds are not shown: its MicroAllocator at " in line, listing
    assert "its vtable pointer is 0x5a5a5a5a, not into tflite::MicroAllocator's vtable" in line, listing
    assert "(overwritten: `arena fault` gives the verdict); AllocateTensors had succeeded" in line, listing
    assert "one arena" not in line and "two arena" not in line and "Cannot access memory" not in listing
    assert "with -g" not in listing, listing


def run_listing(scenario):
    with qemu(ELF) as (port, _uart):
        _d, text = gdb_batch(ELF, ["break standin_boot", "continue", "delete", f"set var standin_scenario = {scenario}",
                                   "hbreak HardFault_Handler", "continue", f"source {PLUGIN}",
                                   f"set arena planner-path {PLANNER}", "arena interpreters"], remote_port=port)
    return text


def test_every_command_that_shows_a_region_shows_it_overwritten():
    """Issue 33: after the stack ran into the tail (scenario 3), `arena fault` named the overwritten
    objects but whereis, regions, map and $arena_owner said nothing of it. The MicroAllocator's
    address (the planner's tail layout, computed here) is in the stack's way: each says so."""
    plan = plan_json()
    base = elf_symbols(ELF)["tensor_arena"]
    ma = next(base + t["offset"] for t in plan["tail"]["regions"] if t["what"] == "MicroAllocator")
    ev, ev_size, evals = next((base + t["offset"], t["size"], t["what"]) for t in plan["tail"]["regions"]
                             if t["what"].startswith("subgraph 0: TfLiteEvalTensor"))
    with qemu(ELF) as (port, _uart):
        _d, text = gdb_batch(ELF, ["break standin_boot", "continue", "delete", "set var standin_scenario = 3",
                                   "hbreak HardFault_Handler", "continue", f"source {PLUGIN}",
                                   f"set arena planner-path {PLANNER}", "set arena colour off",
                                   f"arena whereis {ma:#x}", "arena regions", "arena map",
                                   "set print elements 0", f"p $arena_owner({ma:#x})",
                                   f"pipe arena whereis {ma:#x} --json | cat",
                                   f"p *(TfLiteEvalTensor *){ev + ev_size - 12:#x}", f"p *(TfLiteEvalTensor *){ev:#x}",
                                   "arena stack"],
                             remote_port=port)
    assert (f"{ma:#x} is in MicroAllocator, overwritten at {ma:#x}-{ma + 36:#x} (36 B): its vtable pointer is "
            "0x5a5a5a5a") in text, text
    rows = [ln for ln in text.splitlines() if ln.startswith("  ") and f"{ma:#010x}" in ln and "MicroAllocator" in ln
            and "(predicted)" in ln]
    assert len(rows) == 2 and all("OVERWRITTEN" in ln for ln in rows), rows  # the regions table and the map
    assert "X canary damage, overwritten regions" in text
    assert f'$1 = "{ma:#x} is in arena 0' in text and "(36 B): its vtable pointer" in text.split("$1 = ")[1]
    doc = json.loads(text[text.index('{\n "schema"'):text.index("\n}\n", text.index('{\n "schema"')) + 2])
    assert [o["what"] for o in doc["overwritten"]] == ["MicroAllocator"] and doc["overwritten"][0]["addr"] == ma
    # A printed TfLiteEvalTensor: the array's last one lies where the stack reached (200 B into the
    # arena, the eval tensors' top 68 B), its first one below the reach: only the last is marked.
    assert f"$2 = <OVERWRITTEN: this object lies in {evals}: `arena fault`> " in text, text
    assert "$3 = <OVERWRITTEN" not in text and "$3 = " in text
    # `arena stack` says how far past its limit, as `arena fault` does (the recursion's 200 B, to
    # its frame: 200..239 B), not "8192 B of 8192 B".
    syms = elf_symbols(ELF)
    size = syms["__StackTop"] - syms["__StackLimit"]
    m = re.search(r"peak depth: +>= (\d+) B \(.*?\): (\d+) B past the (\d+) B \(", text)
    assert m and int(m.group(3)) == size and int(m.group(1)) == size + int(m.group(2)), text
    assert 200 <= int(m.group(2)) < 240
