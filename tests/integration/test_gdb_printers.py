"""The pretty-printers for TFLM's types and the $arena_*() convenience functions
(gdbplugin/arenascope_plugin/gdb/printers.py, functions.py) on the TFLM STAND-IN firmware
(examples/tflm_standin/: TFLM's type and member names, NOT TFLM) under real QEMU mps2-an386 and
gdb-multiarch.

Expected values come from elsewhere: the tensors' shapes, sizes, offsets and lifetimes from
`arenascope-plan --json` on the stand-in's model (the layout the stand-in re-enacts), the
arena's base and the stack's limit from the ELF's symbol table (pyelftools), quantization from
GDB's own raw print (`print -raw-values`), the stack's high-water mark from the stack's bytes
read here. Smashed objects are made in GDB convenience variables (copies): the target's memory
is never written by the printers' tests."""
import json
import pathlib
import re
import tempfile

import pytest

from harness import BUILD, PLANNER, ROOT, elf_symbols, gdb_batch, plan_json, qemu

ELF = BUILD / "firmware" / "tflm_standin" / "tflm_standin_fw.elf"
PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
BAD = re.compile(r"Traceback|Python Exception|internal error|Error occurred in Python", re.I)
TENSOR = "main::interpreter.input_tensors_[0]"
OUT = "main::interpreter.output_tensors_[0]"

pytestmark = pytest.mark.skipif(not ELF.exists() or not PLANNER.exists(),
                                reason=f"{ELF} or the planner not built (bash tools/build.sh)")


@pytest.fixture(scope="module")
def plan():
    return plan_json()  # the stand-in's build plans with the default margin


@pytest.fixture(scope="module")
def syms():
    return elf_symbols(ELF)


HELPER = """
import json
import gdb


def printers_all(path):
    \"\"\"Runs each command of the JSON list at path between markers; a gdb.error goes to
    stdout, in order with what the command printed.\"\"\"
    commands = json.load(open(path))
    for n, cmd in enumerate(commands):
        gdb.write("@@%d\\n" % n)
        try:
            gdb.execute(cmd)
        except gdb.error as exc:
            gdb.write("[error] %s\\n" % exc)
    gdb.write("@@%d\\n" % len(commands))
"""


def run(stop, commands, reads=(), elf=ELF, semihosting=False, planner=PLANNER):
    """Boots the stand-in (or `elf`), stops where `stop` says, loads the plugin, runs each command
    between markers. Returns ({command and its index: its output}, GDB's whole output, the probe's dump)."""
    ex = ["set pagination off", "set confirm off", "set width 0", *stop, f"source {PLUGIN}",
          f"set arena planner-path {planner}", "set arena colour off"]
    with tempfile.TemporaryDirectory() as tmp, qemu(elf, semihosting=semihosting) as (port, _):
        helper, listing = pathlib.Path(tmp) / "helper.py", pathlib.Path(tmp) / "commands.json"
        helper.write_text(HELPER)
        listing.write_text(json.dumps(commands))
        dump, text = gdb_batch(elf, [f"source {helper}", *ex, f"python printers_all('{listing}')"], reads=reads,
                               remote_port=port, timeout=240)
    out = {}
    for n, c in enumerate(commands):
        m = re.search(rf"^@@{n}\n(.*?)^@@{n + 1}\n", text, re.S | re.M)
        assert m, f"no output for {c!r}:\n{text}"
        out[n] = out[c] = m.group(1).strip()
    return out, text, dump


HEALTHY = ["break inference_done", "continue", "delete"]


def value(line):
    """The text after "$N = "."""
    return re.sub(r"^\$\d+ = ", "", line, count=1)


def buffer_of(plan, tensor):
    return next(b for b in plan["buffers"] if b["tensor"] == tensor)


def tensor_of(plan, index):
    return plan["subgraphs"][0]["tensors"][index]


def expected_tensor(plan, syms, index, scale, zero_point):
    t, b = tensor_of(plan, index), buffer_of(plan, index)
    base = syms["tensor_arena"]  # alignas(16): TFLM's aligned start is the array's
    shape = "[" + ", ".join(map(str, t["shape"])) + "]"
    return (f"{t['type'].lower()} {shape} {t['bytes']} B, data {base + b['offset']:#x} = arena 0 +{b['offset']}: "
            f"{t['name']} (tensor {index}, head (planned), lifetime {b['first']}..{b['last']}), "
            f"scale {float(scale):.6g} zero_point {zero_point}")


def raw_params(text):
    m = re.search(r"scale = ([-\d.e+]+), zero_point = (-?\d+)", text)
    return m.group(1), int(m.group(2))


def test_tensors_interpreter_and_arrays(plan, syms):
    inp, outp = plan["subgraphs"][0]["inputs"][0], plan["subgraphs"][0]["outputs"][0]
    cmds = [f"print -raw-values -- {TENSOR}->params", f"print -raw-values -- {OUT}->params",
            f"p *{TENSOR}", f"p *{OUT}", f"p *{TENSOR}->dims",
            f"p main::interpreter.graph_.subgraph_allocations_[0].tensors[{inp}]",
            "p main::interpreter", "set print pretty on", f"p *{TENSOR}", "set print pretty off",
            "info pretty-printer", "disable pretty-printer global arenascope", f"p *{TENSOR}",
            "enable pretty-printer global arenascope",
            'interpreter-exec mi "-enable-pretty-printing"', f'interpreter-exec mi "-var-create T * *{TENSOR}"',
            'interpreter-exec mi "-var-list-children T"']
    out, text, _ = run(HEALTHY, cmds)
    assert not BAD.search(text), text
    scale_in, zp_in = raw_params(out[0])
    scale_out, zp_out = raw_params(out[1])
    assert value(out[2]).startswith(expected_tensor(plan, syms, inp, scale_in, zp_in) + " = {type = int8, ")
    assert value(out[3]).startswith(expected_tensor(plan, syms, outp, scale_out, zp_out))
    shape = tensor_of(plan, inp)["shape"]
    assert value(out[4]) == f"size {len(shape)} = {{{', '.join(map(str, shape))}}}"
    # TfLiteEvalTensor: no bytes field; the printer computes them from dims and type
    b = buffer_of(plan, inp)
    assert value(out[5]).startswith(
        f"int8 [{', '.join(map(str, shape))}] {tensor_of(plan, inp)['bytes']} B, data "
        f"{syms['tensor_arena'] + b['offset']:#x} = arena 0 +{b['offset']}: {tensor_of(plan, inp)['name']}")
    arena = plan["arena"]
    ntensors = len(plan["subgraphs"][0]["tensors"])
    assert value(out[6]).startswith(
        f"MicroInterpreter: allocated (AllocateTensors succeeded and TFLM's allocator objects are sound); "
        f"arena {syms['tensor_arena']:#x}, {arena['recommended_bytes']} B; used {arena['arena_used_bytes']} B; "
        f"{ntensors} tensors = {{state = allocated")
    pretty = out[8]
    assert f"  arena_offset = {b['offset']}," in pretty and "  dims = size 4 = {" in pretty, pretty
    assert "arenascope" in out[10] and "TfLiteTensor" in out[10]
    assert value(out[12]).startswith("{quantization = {type = kTfLiteAffineQuantization"), out[12]
    mi = out[16]
    names = re.findall(r'exp="(\w+)"', mi)
    assert names[:6] == ["type", "dims", "data", "arena_offset", "owner", "quantization"], mi


def test_smashed_objects_are_shown_not_raised(syms):
    word_at = syms["tensor_arena"] + 8000  # the input tensor's bytes: the stand-in fills them with 0x0a
    cmds = [f"set $t = *{TENSOR}", "set var $t.dims = (TfLiteIntArray *) 0xF0000000", "p $t",
            f"x/wd {word_at}", f"set var $t.dims = (TfLiteIntArray *) {word_at}", "p $t",
            "set var $t.quantization.params = (void *) 0xF0000000", "set var $t.type = (TfLiteType) 77", "p $t",
            f"set $d = *{TENSOR}->dims", "set var $d.size = -5", "p $d",
            "p *(TfLiteIntArray *) 0xF0000000", f"p *(TfLiteTensor *) {word_at}",
            "set $i = main::interpreter", "set var $i.allocator_ = (tflite::MicroAllocator *) 0xF0000000", "p $i"]
    out, text, _ = run(HEALTHY, cmds)
    assert not BAD.search(text), text
    first = out[2]  # the first `p $t`: only dims is bad, in the summary and the field
    assert value(first).startswith("int8 <unreadable at 0xf0000000> 490 B, data "), first
    assert "dims = <unreadable at 0xf0000000>" in first and first.count("<unreadable") == 2, first
    huge = int(out[3].split(":")[-1])
    assert huge > 1 << 16  # the 0x0a0a0a0a the test expects: a size no TFLM array has
    assert f"<corrupt: dims->size {huge}>" in out[5], out[5]
    third = out[8]
    assert "<corrupt: type 77>" in third and "<unreadable at 0xf0000000>" in third, third
    assert value(out[11]) == "<corrupt: size -5>"
    assert out[12] == "[error] Cannot access memory at address 0xf0000000"  # GDB's own one line
    assert out[13].startswith("$")
    # random bytes (the stand-in's 0x0a fill) as a tensor: each field TFLM could not have set is
    # marked. arm-none-eabi's short enums make type and allocation_type one byte: 10 is
    # kTfLiteFloat16 (common.h), a valid type; allocation_type 10 is past kTfLiteNonCpu (8).
    assert "<corrupt: bytes 168430090, its type and dims make" in out[13], out[13]  # 0x0a0a0a0a
    assert "allocation_type = <corrupt: allocation_type 10>" in out[13], out[13]
    assert "is_variable = <corrupt: is_variable 10>" in out[13], out[13]
    assert value(out[16]).startswith("MicroInterpreter: "), out[16]


def test_functions_against_commands_and_symbols(plan, syms):
    off = buffer_of(plan, 0)["offset"]
    stack = ("stack", "&__StackLimit", 8192)
    cmds = ["p $arena_free()", "p $arena_headroom()", "p $arena_stack_room()",
            f"p $arena_owner(tensor_arena + {off})", "arena info", "arena stack", f"arena whereis tensor_arena + {off}",
            "p $arena_free(7)", "p $arena_owner(main::interpreter)", "p $arena_owner()"]
    out, text, dump = run(HEALTHY, ["set print elements 0", *cmds], reads=[stack])
    assert not BAD.search(text), text
    arena = plan["arena"]
    info = out["arena info"]
    size = int(re.search(r"size (\d+) B", info).group(1))
    used = int(re.search(r"used:\s+(\d+) B", info).group(1))
    headroom = int(re.search(r"headroom:\s+(\d+) B", info).group(1))
    # independent: the planner's figures for this arena
    assert int(value(out["p $arena_free()"])) == size - used == arena["recommended_bytes"] - arena["arena_used_bytes"]
    assert int(value(out["p $arena_headroom()"])) == headroom == arena["recommended_bytes"] - arena["minimum_bytes"]
    # stack room: the lowest word that lost the 0xCC paint, minus the arena's end (__StackLimit)
    mem = bytes.fromhex(dump["mem"]["stack"])
    hwm_off = next(i for i in range(0, len(mem), 4) if mem[i:i + 4] != b"\xcc" * 4)
    room = int(value(out["p $arena_stack_room()"]))
    assert room == hwm_off  # the stack's bottom is the arena's end (examples/tflm_standin/README.md)
    st = out["arena stack"]
    peak = int(re.search(r"peak depth:\s+(\d+) B", st).group(1))
    assert room == int(re.search(r"room to arena end (\d+) B", st).group(1)) - peak
    assert value(out[4]) == '"' + "; ".join(x.strip() for x in out[7].splitlines()) + '"'
    assert out["p $arena_free(7)"] == "[error] $arena_free: no arena 7: the target has 1 (`arena info` lists them)"
    assert out["p $arena_owner(main::interpreter)"].startswith("[error] $arena_owner: not an address")
    assert out["p $arena_owner()"].startswith("[error] $arena_owner: give one address")


def test_breakpoint_condition_stops_when_the_stack_nears_the_arena(syms):
    """Scenario 3 with 100 recursion frames: a condition on $arena_stack_room() stops at the first
    frame whose high-water mark is under 6000 B from the arena; one that never holds lets the
    recursion run through all 100 frames and return."""
    setup = ["break standin_boot", "continue", "delete", "set var standin_scenario = 3",
             "set var standin_recursion_depth = 100"]
    stack = ("stack", "&__StackLimit", 8192)
    cmds = ["break standin_recurse if $arena_stack_room() < 6000", "continue", "p n", "frame 1", "info frame",
            "frame 0", "p $arena_stack_room()"]
    out, text, dump = run(setup, cmds, reads=[stack])
    assert not BAD.search(text) and "Error in testing" not in text, text
    mem = bytes.fromhex(dump["mem"]["stack"])
    room = next(i for i in range(0, len(mem), 4) if mem[i:i + 4] != b"\xcc" * 4)
    # one frame's size: the caller's frame address minus the stopped frame's (GDB's unwinder)
    m = re.search(r"frame at (0x[0-9a-f]+):.*caller of frame at (0x[0-9a-f]+)", out["info frame"], re.S)
    size = int(m.group(1), 16) - int(m.group(2), 16)
    assert int(value(out["p n"])) > 0 and 0 < size < 256
    assert room < 6000 <= room + size, (room, size)  # the first frame under 6000 B
    assert int(value(out[6])) == room
    # after the recursion returns, scenario 3's main calls allocation_failed() (main.cpp)
    never = ["break standin_recurse if $arena_stack_room() < 0", "break allocation_failed", "continue",
             "info breakpoints"]
    out, text, _ = run(setup, never)
    assert not BAD.search(text) and "Error in testing" not in text, text
    assert "allocation_failed" in out["continue"], out["continue"]
    listing = out["info breakpoints"]
    assert "stop only if $arena_stack_room() < 0" in listing
    assert "already hit" not in listing.split("allocation_failed")[0], listing


KILL_SERVER = ("python import subprocess; subprocess.run(['pkill', '-KILL', '-f', 'tcp:' + "
               "gdb.selected_inferior().connection.details + '$'])")


def test_functions_after_a_lost_link_say_what_the_commands_say():
    """The GDB server dies under a stopped GDB: each $arena_*() then fails in one line with its own
    name and the very words `arena info` uses (one check of the link, framework.check_readable),
    never the old bare "target is not running"."""
    cmds = [f"set $t = *{TENSOR}", KILL_SERVER, "x/x $sp", "arena info", "p $arena_free()", "p $arena_headroom()",
            "p $arena_stack_room()", "p $arena_owner(0)", "p $t"]
    out, text, _ = run(HEALTHY, cmds)
    assert not BAD.search(text), text
    # A tensor copied before: its pointers are not followed into the ELF file's zeros (no "<null")
    t = out["p $t"]
    assert "dims = <not read: no target (GDB would give the ELF file's bytes, not the RAM)>" in t, t
    assert "<null" not in t and "owner = unknown: the target is not running" in t, t
    assert "Remote communication error" in out["x/x $sp"] or "Remote connection closed" in out["x/x $sp"], out

    said = out["arena info"]
    assert said.startswith("[error] arena info: the target is not running: connect to it"), said
    reason = said[len("[error] arena info: "):]
    for name in ("arena_free", "arena_headroom", "arena_stack_room", "arena_owner"):
        got = next(v for k, v in out.items() if isinstance(k, str) and k.startswith(f"p ${name}("))
        assert got == f"[error] ${name}: {reason}", got


def test_without_the_planner_the_owner_is_unknown_and_says_why(plan):
    """Agentless with a planner that fails (/bin/false), a head tensor's owner is not "no region
    owns it" (the head's regions come from the plan): it says the plan is missing, and why."""
    off = buffer_of(plan, plan["subgraphs"][0]["inputs"][0])["offset"]  # the place is known all the same
    addr = f"&tensor_arena[{off}]"
    out, text, _ = run(HEALTHY, [f"p *{TENSOR}", f"p *{OUT}", f"p $arena_owner({addr})", f"arena whereis {addr}",
                                 f"pipe arena whereis {addr} --json | cat", "arena check"], planner="/bin/false")
    assert not BAD.search(text), text
    # the function and the command say it as the printer does (one rule: analyse.figures)
    for shown in (out[2], out[3]):
        assert "owner unknown: the head's tensors come from the plan, and there is none (" in shown, shown
        assert "no region owns it" not in shown, shown
    place = json.loads(out[4])["arenas"][0]
    assert place["regions"] == [] and place["offset"] == off and "come from the plan" in place["owner_unknown"]
    # and the check of the plan says it checked nothing, not PASS over no regions
    plan_line = next(ln for ln in out[5].splitlines() if ln.split()[1:2] == ["plan"])
    assert plan_line.split()[0] == "WARN" and "the memory plan is not checked: the head's tensors come" in plan_line
    for shown in (out[f"p *{TENSOR}"], out[f"p *{OUT}"]):
        assert ": owner unknown: the head's tensors come from the plan, and there is none (" in shown, shown
        assert "no region owns it" not in shown, shown
    assert "arenascope-plan" in out[f"p *{TENSOR}"].split("there is none (")[1], out[f"p *{TENSOR}"]
    assert f"= arena 0 +{off}: owner unknown" in out[f"p *{TENSOR}"], out[f"p *{TENSOR}"]


def test_a_new_planner_setting_is_used_at_the_same_stop(plan):
    """The printers keep one gather a stop; `set arena planner-path` at that stop makes it stale:
    the next print uses the new planner (none: owner unknown), and the good one again after."""
    shown = f"p *{TENSOR}"
    out, text, _ = run(HEALTHY, [shown, "set arena planner-path /bin/false", shown,
                                 f"set arena planner-path {PLANNER}", shown])
    assert not BAD.search(text), text
    name = tensor_of(plan, plan["subgraphs"][0]["inputs"][0])["name"]
    assert f": {name} (tensor " in out[0], out[0]
    assert ": owner unknown: the head's tensors come from the plan, and there is none (" in out[2], out[2]
    assert f": {name} (tensor " in out[4], out[4]


def test_arena_attach_at_the_same_stop_changes_the_owner(plan, syms):
    """Scenario 5 (two interpreters): a tensor of the two-arena one is owned in its arena while
    that interpreter is the one read, and outside every arena once `arena attach` chooses the
    other, at the same stop: the printers' gather follows `arena attach`."""
    second, first = syms["_ZZ4mainE6second"], syms["_ZZ4mainE11interpreter"]
    index = {a: k for k, a in enumerate(sorted((second, first)))}  # `arena interpreters` lists by address
    np_base = syms["standin_non_persistent_arena"]
    stop = ["break standin_boot", "continue", "set var standin_scenario = 5", "break inference_done", "continue",
            "delete"]
    shown = f"p *(*(tflite::MicroInterpreter *){second:#x}).input_tensors_[0]"
    out, text, _ = run(stop, [f"arena attach --interpreter {index[second]}", shown,
                              f"arena attach --interpreter {index[first]}", shown,
                              f"arena attach --interpreter {index[second]}", shown])
    assert not BAD.search(text), text
    t = plan["subgraphs"][0]["inputs"][0]
    off = buffer_of(plan, t)["offset"]
    owned = f"data {np_base + off:#x} = arena 0 +{off}: {tensor_of(plan, t)['name']} (tensor {t}, "
    assert owned in out[1] and owned in out[5], (out[1], out[5])
    assert "owner = outside every arena" in out[3] and owned not in out[3], out[3]


def test_functions_while_the_target_runs_say_what_the_commands_say():
    """After `continue &` (all-stop) the target really runs: each function refuses in the commands'
    words, as `arena info` does; a breakpoint condition (the thread stopped, though GDB counts it
    as running) is not refused (test_breakpoint_condition_stops_when_the_stack_nears_the_arena)."""
    cmds = ["continue &", "p $arena_free()", "p $arena_headroom()", "p $arena_stack_room()",
            "p $arena_owner(0x20000000)", "arena info", "interrupt"]
    out, text, _ = run(HEALTHY, cmds)
    assert not BAD.search(text), text
    words = "the target is running and GDB cannot read its memory in all-stop mode: halt it (Ctrl-C or `interrupt`)"
    assert out[5] == f"[error] arena info: {words} and retry", out[5]
    for n, name in ((1, "arena_free"), (2, "arena_headroom"), (3, "arena_stack_room"), (4, "arena_owner")):
        assert out[n] == f"[error] ${name}: {words} and retry", out[n]


def test_functions_on_an_arena_too_small_say_what_arena_info_says(plan, syms):
    """Scenario 1 with the arena 300 B below the planner's minimum, stopped where TFLM reports the
    failed allocation: `arena info` prints no headroom (AllocateTensors did not finish), and
    $arena_headroom() fails with its words; $arena_free() is the free band TFLM left,
    size - the tail it had allocated, as `arena info`'s used line gives it."""
    size = plan["arena"]["minimum_bytes"] - 300
    stop = ["break standin_boot", "continue", "set var standin_scenario = 1", f"set var standin_arena_bytes = {size}",
            "break allocation_failed", "continue", "delete"]
    out, text, _ = run(stop, ["arena info", "p $arena_headroom()", "p $arena_free()"])
    assert not BAD.search(text), text
    words = "not measured: AllocateTensors did not finish (`arena fault` gives the shortfall)"
    assert f"  headroom:               {words}" in out[0].splitlines(), out[0]
    assert out[1] == f"[error] $arena_headroom: {words}", out[1]
    used = int(next(ln for ln in out[0].splitlines() if ln.startswith("  used:")).split()[1])
    assert used > 0 and int(value(out[2])) == size - used, (out[2], used)
