"""The stack's worst case from the ELF (analyse/callgraph.py, analyse/stackdepth.py,
analyse/rambudget.py, `arenascope budget`), checked against GCC's own account of the same program:
-fstack-usage (.su: each function's frame) and -fcallgraph-info (.ci: its direct calls), on a real
Cortex-M and a real RV32 build of stackdepth/calls.c (direct calls, a tail call, a mutual recursion,
an indirect call through a table, an interrupt or trap handler). The expected worst cases are
worked out here from GCC's files, apart from the code under test."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
from elftools.elf.elffile import ELFFile

HERE = pathlib.Path(__file__).resolve().parent
SRC, LD = HERE / "stackdepth" / "calls.c", HERE / "stackdepth" / "calls.ld"
TOOL = HERE.parents[1] / "gdbplugin" / "arenascope"
sys.path.insert(0, str(HERE.parents[1] / "gdbplugin"))

from arenascope_plugin.acquire.elfsymbols import ElfSymbols  # noqa: E402
from arenascope_plugin.analyse import callgraph, rambudget, stackdepth  # noqa: E402

ARM = ["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb"]
RV32 = ["riscv64-unknown-elf-gcc", "-march=rv32imac", "-mabi=ilp32", "-nostartfiles",
        "-Wl,--defsym=FLASH_ORIGIN=0x80000000"]
CORTEX_M_ENTRY = 8 * 4 + 4  # ARMv7-M ARM B1.5.7: the basic frame and 4 B of alignment padding (no FPU here)


def _build(tmp, cc, name, stack=2048, defines=(), src=SRC):
    if shutil.which(cc[0]) is None:
        pytest.skip(f"{cc[0]} is not installed")
    out = tmp / name
    out.mkdir()
    elf = out / "calls.elf"
    subprocess.run(cc + ["-O2", "-g", "-fstack-usage", "-fcallgraph-info=su", "-nostdlib", *defines, "-T", str(LD),
                         f"-Wl,--defsym=STACK_BYTES={stack}", str(src), "-lgcc", "-o", str(elf)], cwd=out, check=True)
    su = next(out.glob("*.su"))
    ci = next(out.glob("*.ci"))
    return elf, su, ci


def _gcc_frames(su):
    return {line.split("\t")[0].rsplit(":", 1)[1]: int(line.split("\t")[1]) for line in su.read_text().splitlines()}


def _gcc_calls(ci):
    out = {}
    for m in re.finditer(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"', ci.read_text()):
        out.setdefault(m[1], set()).add(m[2])
    return out


def _deepest(calls, frames, start, table=("k1", "k2")):
    """The deepest simple path from start over GCC's graph, its indirect call going to the table."""
    def walk(f, on):
        best = 0
        for c in calls.get(f, ()):
            for callee in (table if c == "__indirect_call" else (c,)):
                if callee not in on:
                    best = max(best, walk(callee, on | {callee}))
        return frames[f] + best
    return walk(start, {start})


@pytest.fixture(scope="module", params=["cortex-m", "rv32"])
def build(request, tmp_path_factory):
    cc = ARM if request.param == "cortex-m" else RV32
    return request.param, *_build(tmp_path_factory.mktemp(request.param), cc, "roomy")


def test_every_frame_is_the_one_gcc_reports(build):
    _, elf, su, _ = build
    g = callgraph.build(str(elf))
    frames = stackdepth._Frames(g, str(elf), {})  # pylint: disable=protected-access
    by_name = {g.name(a): a for a in g.functions}
    gcc = _gcc_frames(su)
    assert set(gcc) <= set(by_name)
    assert {n: frames.of(by_name[n]) for n in gcc} == {n: (b, stackdepth.CFI) for n, b in gcc.items()}


def test_every_direct_call_gcc_reports_is_an_edge(build):
    _, elf, _, ci = build
    g = callgraph.build(str(elf))
    ours = {}
    for lo, edges in g.edges.items():
        for e in edges:
            ours.setdefault(g.name(lo), {}).setdefault(g.name(e.callee), set()).add((e.tail, e.rule))
    for caller, callees in _gcc_calls(ci).items():
        for callee in callees - {"__indirect_call"}:
            assert callee in ours.get(caller, {}), f"{caller} -> {callee} missing"
    # the tail call `return twice(x + 7)` is a branch, and counted as one
    assert ours["tail"]["twice"] == {(True, "")}
    # the call through table[] goes to every function whose address the code or data takes: k1, k2 (and
    # on RV32 not the trap handler, whose address main writes to mtvec: the hardware enters it)
    assert set(ours["dispatch"]) == {"k1", "k2"}
    assert {r for v in ours["dispatch"].values() for _, r in v} == {callgraph.TAKEN}


def test_the_worst_case_is_gccs_deepest_path_and_the_recursion_is_named(build):
    arch, elf, su, ci = build
    frames, calls = _gcc_frames(su), _gcc_calls(ci)
    calls.setdefault("Reset_Handler", set()).add("main")
    d = stackdepth.analyse(str(elf))
    assert d.problem == ""
    assert d.thread.bytes == _deepest(calls, frames, "Reset_Handler")
    assert [s.name for s in d.thread.path] == ["Reset_Handler", "main", "dispatch", "k1"]
    assert d.thread.floor and d.thread.cycles in ([["even", "odd", "even", f"{frames['even']} B a level"]],
                                                  [["odd", "even", "odd", f"{frames['even']} B a level"]])
    handlers = {h.what: h for h in d.handlers}
    if arch == "cortex-m":
        assert set(handlers) == {"SysTick", "NMI and 3 more vectors"}
        systick = handlers["SysTick"]
        assert systick.bytes == CORTEX_M_ENTRY + frames["SysTick_Handler"] + frames["leaf"]
        assert d.main_stack_bytes == d.thread.bytes + systick.bytes + CORTEX_M_ENTRY + frames["Default_Handler"]
    else:
        trap = handlers["trap handler (mtvec, set in main)"]
        calls["trap_handler"] = {"k2"}
        assert trap.bytes == _deepest(calls, frames, "trap_handler") and trap.entry_bytes == 0
        assert d.main_stack_bytes == d.thread.bytes + trap.bytes  # one trap at a time


def test_the_su_file_comes_first_and_a_prologue_stands_in_for_missing_cfi(tmp_path):
    elf, su, _ = _build(tmp_path, ARM, "arm")
    frames = _gcc_frames(su)
    stripped = tmp_path / "nocfi.elf"
    subprocess.run(["arm-none-eabi-objcopy", "--remove-section=.debug_frame", str(elf), str(stripped)], check=True)
    d = stackdepth.analyse(str(stripped))
    assert set(d.frames_from) == {stackdepth.PROLOGUE}
    assert d.thread.bytes == stackdepth.analyse(str(elf)).thread.bytes
    fake = tmp_path / "big.su"
    fake.write_text(su.read_text().replace(f"k1\t{frames['k1']}\t", "k1\t1000\t"))
    d = stackdepth.analyse(str(elf), [str(fake)])
    assert d.thread.bytes == frames["Reset_Handler"] + frames["main"] + frames["dispatch"] + 1000
    assert d.thread.path[-1].source == stackdepth.SU


def test_save_restore_millicode_is_the_callers_frame_not_a_call(tmp_path):
    """GCC's -msave-restore saves registers with `jal t0, __riscv_save_N` into the caller's frame,
    which the caller's call frame information counts: no edge, and the frames stay GCC's."""
    elf, su, _ = _build(tmp_path, RV32 + ["-msave-restore"], "rv32sr")
    g = callgraph.build(str(elf))
    names = {g.name(e.callee) for edges in g.edges.values() for e in edges}
    assert not any(n.startswith("__riscv_save") for n in names)
    frames, d = _gcc_frames(su), stackdepth.analyse(str(elf))
    assert [(s.name, s.frame) for s in d.thread.path[1:]] == [(n, frames[n]) for n in ("main", "dispatch", "k1")]


def test_calls_that_only_pointers_join_are_counted_and_a_table_in_text_is_read(tmp_path):
    """The chain chain_a -(p1)-> chain_b -(p2)-> leaf: each pointer call may reach each of them, a
    cycle the ELF cannot confirm. The calls that would close it in a walk from Reset are left out
    and named; the chain itself is counted (never below it), and nothing is called a recursion.
    The const table linked into .text resolves to its two entries."""
    elf, su, _ = _build(tmp_path, ARM, "ptr", src=HERE / "stackdepth" / "pointers.c")
    frames = _gcc_frames(su)
    d = stackdepth.analyse(str(elf))
    chain = frames["Reset_Handler"] + frames["main"] + frames["chain_a"] + frames["chain_b"] + frames["leaf"]
    assert d.thread.bytes >= chain
    assert not d.thread.cycles and d.pointer_cuts and not d.thread.floor
    g = callgraph.build(str(elf))
    by_name = {g.name(a): a for a in g.functions}
    table = {g.name(e.callee) for e in g.edges[by_name["table_call"]]}
    assert {"heavy", "light"} <= table
    assert {h.what for h in d.handlers} == {"NMI and 1 more vectors"}  # the table is the 4-word `vectors`


def test_the_vector_table_is_found_whatever_the_entry_point_says(tmp_path):
    """With the ELF's entry point elsewhere (no ENTRY() in a linker script: the start of .text),
    the table is still the `vectors` object, Reset still starts the thread, and the table ends at
    the object's size (its 16 words), not at the next function pointers in flash."""
    elf, _, _ = _build(tmp_path, ARM, "entry", defines=["-Wl,--entry=Default_Handler"])
    d, normal = stackdepth.analyse(str(elf)), stackdepth.analyse(str(_build(tmp_path, ARM, "normal")[0]))
    assert d.thread.path[0].name == "Reset_Handler" and d.thread.bytes == normal.thread.bytes
    assert [h.what for h in d.handlers] == [h.what for h in normal.handlers]
    assert d.main_stack_bytes == normal.main_stack_bytes


@pytest.mark.parametrize("cc", [ARM, RV32], ids=["cortex-m", "rv32"])
def test_a_virtual_call_goes_to_its_vtable_slot_and_a_struct_pointer_to_no_virtual(tmp_path, cc):
    """virtual.cpp: measure() calls Shape::perimeter, the vtable's fourth slot (the two destructors,
    area, perimeter: Itanium C++ ABI 2.5.2, in declaration order), so only the two overrides of it;
    run_hook() calls a struct's function pointer, so no virtual function at all."""
    gxx = [cc[0].replace("-gcc", "-g++")] + cc[1:] + ["-fno-rtti", "-fno-exceptions", "-fno-use-cxa-atexit"]
    elf, _, _ = _build(tmp_path, gxx, "cxx", src=HERE / "stackdepth" / "virtual.cpp")
    g = callgraph.build(str(elf))
    by_name = {g.name(a): a for a in g.functions}

    def callees(f, rule):
        return {g.name(e.callee) for e in g.edges[by_name[f]] if e.rule == rule}
    assert callees("measure", callgraph.VIRTUAL) == {"Square::perimeter", "Circle::perimeter"}
    assert callees("run_hook", callgraph.VIRTUAL) == set()
    assert "on_hook" in callees("run_hook", callgraph.TAKEN)


def test_the_users_bound_and_calls_replace_what_the_elf_cannot_say(build):
    """--bound even=10: the even/odd recursion counts ten times around, and the figure is no floor;
    --calls dispatch=k2: the table call goes to k2 alone. Expected figures from GCC's .su."""
    arch, elf, su, _ = build
    frames = _gcc_frames(su)
    d = stackdepth.analyse(str(elf), bounds={"even": 10})
    assert not d.thread.floor and d.thread.bounded and not d.thread.cycles
    assert d.thread.bytes == frames["Reset_Handler"] + frames["main"] + 10 * (frames["even"] + frames["odd"])
    g = callgraph.build(str(elf), {"dispatch": ["k2"]})
    by_name = {g.name(a): a for a in g.functions}
    assert {(g.name(e.callee), e.rule) for e in g.edges[by_name["dispatch"]]} == {("k2", callgraph.USER)}
    with pytest.raises(ValueError, match="no function 'nosuch'"):
        stackdepth.analyse(str(elf), bounds={"nosuch": 2})


M0PLUS = ["arm-none-eabi-gcc", "-mcpu=cortex-m0plus", "-mthumb"]


@pytest.mark.parametrize("cc", [M0PLUS, ARM, RV32], ids=["cortex-m0plus", "cortex-m4", "rv32"])
def test_a_prologue_sizes_a_big_frame_and_alloca_is_named_dynamic(tmp_path, cc):
    """frames.c without .debug_frame: big_frame's prologue gives GCC's .su figure (on ARMv6-M an
    LDR of -N and an ADD SP); use_alloca moves SP by a register, so it is named dynamic with the
    instruction, and the figure is a floor, with or without call frame information."""
    elf, su, _ = _build(tmp_path, cc, "frames", src=HERE / "stackdepth" / "frames.c")
    frames = _gcc_frames(su)
    objcopy = cc[0].replace("-gcc", "-objcopy")
    bare = tmp_path / "nocfi.elf"
    subprocess.run([objcopy, "--remove-section=.debug_frame", str(elf), str(bare)], check=True)
    for path, source in ((elf, stackdepth.CFI), (bare, stackdepth.PROLOGUE)):
        g = callgraph.build(str(path))
        f = stackdepth._Frames(g, str(path), {})  # pylint: disable=protected-access
        by_name = {g.name(a): a for a in g.functions}
        assert f.of(by_name["big_frame"]) == (frames["big_frame"], source)
        d = stackdepth.analyse(str(path))
        assert d.thread.floor and len(d.thread.dynamic_frames) == 1
        assert d.thread.dynamic_frames[0].startswith("use_alloca (") and "sp" in d.thread.dynamic_frames[0]


def _budget(tmp_path, stack, defines=()):
    elf, _, _ = _build(tmp_path, ARM, f"s{stack}{len(defines)}", stack=stack, defines=defines)
    r = subprocess.run([sys.executable, str(TOOL), "budget", "--elf", str(elf), "--json"], capture_output=True,
                       text=True, check=False)
    return elf, r.returncode, json.loads(r.stdout)


def test_the_gate_fails_on_recursion_and_on_a_stack_too_close_to_the_arena(tmp_path):
    elf, status, doc = _budget(tmp_path, 2048)
    assert (status, doc["verdict"]) == (6, "FAIL")
    assert "even -> odd" in doc["reason"] or "odd -> even" in doc["reason"]
    elf, status, doc = _budget(tmp_path, 2048, ["-DNO_RECURSION"])
    arena = ElfSymbols(str(elf))
    lo, hi = arena.address("__StackLimit"), arena.address("__StackTop")
    worst = stackdepth.analyse(str(elf)).main_stack_bytes
    assert (doc["stack"]["low"], doc["stack"]["high"]) == (lo, hi)
    with open(elf, "rb") as f:
        section = ELFFile(f).get_section_by_name(".tensor_arena")  # calls.ld: the arena right below the stack
        a_lo, a_hi = section["sh_addr"], section["sh_addr"] + section["sh_size"]
    assert (doc["arena"]["low"], doc["arena"]["high"], doc["arena"]["bytes"]) == (a_lo, a_hi, 4096)
    assert doc["gap_bytes"] == lo - a_hi and doc["room_bytes"] == hi - a_hi and doc["worst_bytes"] == worst
    assert doc["required_room_bytes"] == -(-3 * worst // 2)
    assert doc["largest_arena_bytes"] == hi - doc["required_room_bytes"] - doc["arena"]["low"]
    assert (status, doc["verdict"]) == (0, "PASS")
    tight = (3 * worst // 2 - 8) // 8 * 8  # a stack that holds the worst case but not 1.5 x it
    assert worst <= tight and tight + doc["gap_bytes"] < 3 * worst / 2
    _, status, doc = _budget(tmp_path, tight, ["-DNO_RECURSION"])
    assert (status, doc["verdict"]) == (6, "FAIL") and doc["room_bytes"] == tight + doc["gap_bytes"]


def test_arena_check_budget_judges_the_rule_on_the_running_stacks_room(tmp_path):
    """rambudget.check, the `budget` rule of `arena check --budget`: the worst case from the ELF
    against the room the running firmware's stack figures give (stack top - the arena's end)."""
    from arenascope_plugin.analyse import figures  # pylint: disable=import-outside-toplevel
    for stack_bytes, verdict in ((2048, "PASS"), (256, "FAIL")):
        elf, _, _ = _build(tmp_path, ARM, f"check{stack_bytes}", stack=stack_bytes, defines=["-DNO_RECURSION"])
        syms = ElfSymbols(str(elf))
        lo, hi = syms.address("__StackLimit"), syms.address("__StackTop")
        d = stackdepth.analyse(str(elf))
        stack = figures.StackFigures(low=lo, high=hi, sp=None, hwm=None, source="none", painted=False, arena_end=lo)
        c = rambudget.check(d, stack)
        need = -(-3 * d.main_stack_bytes // 2)
        assert (c.rule, c.verdict) == ("budget", verdict), c
        assert f"{hi - lo} B {'>=' if verdict == 'PASS' else '<'} 1.5 x the worst case {d.main_stack_bytes} B = " \
               f"{need} B" in c.reason, c
    recursive, _, _ = _build(tmp_path, ARM, "check-rec")
    c = rambudget.check(stackdepth.analyse(str(recursive)), stack)
    assert c.verdict == "WARN" and "recursion has no bound" in c.reason and "--bound" in c.reason
    assert rambudget.check(None, stack).verdict == "WARN"


def test_an_elf_with_no_decoder_or_no_symbols_is_said_not_crashed(tmp_path):
    elf, _, _ = _build(tmp_path, ARM, "arm")
    stripped = tmp_path / "stripped.elf"
    subprocess.run(["arm-none-eabi-objcopy", "--strip-all", str(elf), str(stripped)], check=True)
    d = stackdepth.analyse(str(stripped))
    assert "no symbol table" in d.problem
    b = rambudget.build(str(stripped), ElfSymbols(str(stripped)), d)
    assert b.verdict == "WARN" and "not judged" in b.reason
    empty, garbage = tmp_path / "empty", tmp_path / "garbage.su"
    empty.mkdir()
    garbage.write_text("not a stack usage line\n")
    for args, says in ((["--su", str(empty)], "no .su file under it"),
                       (["--su", str(garbage)], "holds no -fstack-usage line"),
                       (["--arena-bytes", "0"], "an arena is 1 B to 4 GiB"),
                       (["--arena-bytes", "100", "--model", str(garbage)], "not both"),
                       (["--bound", "even=none"], "give FUNCTION=LEVELS"),
                       (["--calls", "dispatch"], "give CALLER=CALLEE"),
                       (["--calls", "nosuch=k1"], "no function 'nosuch'"),
                       (["--arena", "nosuch"], "no RAM object 'nosuch'")):
        r = subprocess.run([sys.executable, str(TOOL), "budget", "--elf", str(elf), *args], capture_output=True,
                           text=True, check=False)
        assert (r.returncode, r.stdout) == (2, "") and says in r.stderr and "Traceback" not in r.stderr, args
    host = shutil.which("gcc")
    if host:
        subprocess.run([host, "-x", "c", "-", "-o", str(tmp_path / "host.elf")], input="int main(void){return 0;}",
                       text=True, check=True)
        r = subprocess.run([sys.executable, str(TOOL), "budget", "--elf", str(tmp_path / "host.elf")],
                           capture_output=True, text=True, check=False)
        assert r.returncode == 2 and "no call decoder for this ELF's architecture" in r.stderr
    junk = tmp_path / "junk.elf"
    junk.write_bytes(os.urandom(64))
    r = subprocess.run([sys.executable, str(TOOL), "budget", "--elf", str(junk)], capture_output=True, text=True,
                       check=False)
    assert r.returncode == 2 and "arenascope" in r.stderr and "Traceback" not in r.stderr
