"""Agentless post-mortem on the TFLM STAND-IN (examples/tflm_standin/, NOT TensorFlow Lite Micro)
built for RV32: tflm_standin_rv32_fw.elf (rv32imac, ilp32, picolibc; examples/tflm_standin/rv32/)
on real `qemu-system-riscv32 -M virt -bios none` under real gdb-multiarch with the plugin. Its
arena is laid out by re-enacting `arenascope-plan --target riscv32`'s steps (TfLiteTensor is 40 B
there: 4-byte enums), right below picolibc's stack (virt_rv32_standin.ld). Three states, the
stand-in's scenario selectors set from GDB at standin_boot():

- healthy (scenario 0): `arena info`'s used, head and tail are the planner's riscv32 figures (not
  its cortex-m ones), every planned tensor where the plan puts it, `arena check` PASS;
- a store access fault (scenario 6: the kernel writes through the wild pointer
  standin_wild_address): mcause 7 decoded from the core's registers in trap_handler (mtvec);
- the stack run into the arena (scenario 3): a recursion 600 B below the stack's limit into the
  arena's persistent tail, then the next Invoke follows the eval tensors and node array the
  frames overwrote and traps; `arena fault` says the stack did it and names TFLM's objects at their
  addresses. At scenario 3's default 200 B the frames leave SubgraphAllocations' two words in
  locals they never write, so that Invoke survives: the verdict then comes without a trap.

Every expected figure is computed here: the planner's JSON (run here, --target riscv32), the
ELF's symbols (pyelftools), the compiler's type sizes (DWARF, read by GDB without a target) and
GDB's own `info registers mcause mepc mtval`; never the plugin's."""
import json
import pathlib
import re
import subprocess
import tempfile

import pytest

from harness import (
    BAD_OUTPUT,
    BUILD,
    DEMO_MODEL,
    PLANNER,
    ROOT,
    RV32_VIRT,
    elf_symbols,
    figure,
    gdb_batch,
    info_register,
    plan_json,
    qemu,
    rv32_firmware_skip,
)

ELF = BUILD / "firmware" / "tflm_standin_rv32" / "tflm_standin_rv32_fw.elf"
PLUGIN = ROOT / "gdbplugin" / "arenascope.py"

pytestmark = rv32_firmware_skip(ELF)


@pytest.fixture(scope="module")
def plan():
    """The planner's riscv32 JSON for the stand-in's model, as the build runs it (default margin)."""
    r = subprocess.run([str(PLANNER), "--json", "--target", "riscv32", str(DEMO_MODEL)], capture_output=True,
                       text=True, timeout=60, check=True)
    doc = json.loads(r.stdout)
    assert doc["target"] == "riscv32"
    return doc


@pytest.fixture(scope="module")
def symbols():
    return elf_symbols(ELF)


def session(scenario, stop, sets=(), commands=("info", "check", "fault")):
    """Boots the RV32 stand-in halted, sets standin_scenario (and `sets`, more GDB commands) at
    standin_boot(), runs to the breakpoint `stop`, then GDB's `info registers mcause mepc mtval`
    and each `arena` command of `commands`, each after a marker line. Returns ({"registers": ...,
    command: its output}, QEMU's stdout (the firmware's semihosted output), GDB's output)."""
    with tempfile.TemporaryDirectory() as tmp, qemu(ELF, semihosting=True, **RV32_VIRT) as (port, uart):
        snap = pathlib.Path(tmp) / "snap.json"
        cmds = ["set pagination off", "set confirm off", "break standin_boot", "continue",
                f"set var standin_scenario = {scenario}", *sets, "delete", f"break {stop}", "continue",
                f"source {PLUGIN}", f"set arena planner-path {PLANNER}", "set arena colour off"]
        parts = [("registers", "info registers mcause mepc mtval"), *((c, f"arena {c}") for c in commands),
                 ("snapshot", f"arena snapshot {snap}")]
        for name, command in parts:
            cmds += [f"echo @@{name}@@\\n", command]
        _dump, text = gdb_batch(ELF, cmds, remote_port=port, timeout=180)
        out = {name: text.split(f"@@{name}@@\n", 1)[1].split("@@", 1)[0] if f"@@{name}@@\n" in text else ""
               for name, _ in parts}
        out["snap"] = json.loads(snap.read_text()) if snap.exists() else None
        uart_text = uart.read_text(errors="replace")
    assert not BAD_OUTPUT.search(text), text
    for name, _ in parts[1:]:
        assert out[name].strip(), f"`{name}` printed nothing:\n{text[-3000:]}"
    return out, uart_text, text




def tail_objects(plan, base):
    """{what: address} of the tail's objects in the stand-in's arena (the recommended size)."""
    return {t["what"]: base + t["offset"] for t in plan["tail"]["regions"]}


def test_the_rv32_types_have_the_sizes_the_riscv32_planner_uses(plan):
    """The stand-in's TFLM types as riscv64-unknown-elf-g++ laid them out (DWARF, read by GDB with
    no target) are the sizes the planner's riscv32 steps request: TfLiteTensor 40 B, not Arm's 32."""
    types = {"arena-allocator": "tflite::SingleArenaBufferAllocator", "memory-planner": "tflite::GreedyMemoryPlanner",
             "micro-allocator": "tflite::MicroAllocator", "subgraph-allocations": "tflite::SubgraphAllocations",
             "eval-tensors": "TfLiteEvalTensor", "node-and-registration": "tflite::NodeAndRegistration",
             "input-tensor": "TfLiteTensor", "output-tensor": "TfLiteTensor"}
    script = "; ".join(f"print('{t}', gdb.lookup_type('{t}').strip_typedefs().sizeof)" for t in set(types.values()))
    r = subprocess.run(["gdb-multiarch", "-q", "-nx", "-batch", "-ex", f"python {script}", str(ELF)],
                       capture_output=True, text=True, timeout=60)
    sizes = {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in r.stdout.splitlines() if " " in line}
    assert set(sizes) == set(types.values()), r.stdout + r.stderr
    assert sizes["TfLiteTensor"] == 40
    checked = set()
    for step in plan["steps"]:
        if step["kind"] == "persistent" and step.get("role") in types:
            assert step["bytes"] == step["count"] * sizes[types[step["role"]]], step
            checked.add(step["role"])
    assert checked == set(types), checked


def test_the_arena_lies_right_below_picolibcs_stack(plan, symbols):
    """virt_rv32_standin.ld: tensor_arena (the recommended size) ends where the stack picolibc's
    crt0 runs on begins (__stack - __stack_size), as it ends at __StackLimit on the Cortex-M4."""
    from elftools.elf.elffile import ELFFile
    with open(ELF, "rb") as f:
        elf = ELFFile(f)
        arena = next(s for s in elf.get_section_by_name(".symtab").iter_symbols() if s.name == "tensor_arena")
        stack = elf.get_section_by_name(".stack")
        assert (stack["sh_addr"], stack["sh_size"]) == (symbols["__stack"] - symbols["__stack_size"],
                                                        symbols["__stack_size"])
    assert arena["st_size"] == plan["arena"]["recommended_bytes"]
    assert symbols["tensor_arena"] % 16 == 0
    assert symbols["tensor_arena"] + arena["st_size"] == symbols["__stack"] - symbols["__stack_size"]


def test_healthy(plan, symbols):
    """Scenario 0, stopped at inference_done(1): the arena the plugin walks from TFLM's objects is the
    planner's riscv32 prediction (the plugin asks the planner for the ELF's architecture: its
    cortex-m figures differ), every tensor at its planned offset, and every check passes."""
    got, uart, _text = session(0, "inference_done")
    assert "AllocateTensors ok" in uart and "Failed" not in uart, uart
    head = plan["plans"]["tflm-greedy"]["head_bytes"]
    tail, used = plan["tail"]["bytes"], plan["arena"]["arena_used_bytes"]
    arm = plan_json()   # the same model for cortex-m: 32 B TfLiteTensors
    assert (arm["tail"]["bytes"], arm["arena"]["arena_used_bytes"]) != (tail, used), "the figures would not tell"
    info = got["info"]
    got_figures = (figure(info, "head (planned)"), figure(info, "tail (persistent)"), figure(info, "used"))
    assert got_figures == (head, tail, used), info
    size = plan["arena"]["recommended_bytes"]
    base = symbols["tensor_arena"]
    assert f"bounds:                 {base:#x}-{base + size:#x}, size {size} B" in info, info
    limit = symbols["__stack"] - symbols["__stack_size"]
    assert f"stack:                    {limit:#x}-{symbols['__stack']:#x}, size {symbols['__stack_size']} B" in info
    check = got["check"]
    assert "arena check: PASS" in check and "FAIL" not in check, check
    assert "arena fault: no fault" in got["fault"], got["fault"]
    a = got["snap"]["arenas"][0]
    assert (a["base_addr"], a["size_bytes"]) == (base, size)
    assert (a["head_bytes"], a["tail_bytes"], a["used_bytes"]) == (head, tail, used)
    assert got["snap"]["tflm"]["condition"] == "allocated"
    offsets = {(r["name"], r["offset"]) for r in a["regions"] if r.get("kind") == "tensor"}
    assert offsets == {(b["name"], b["offset"]) for b in plan["buffers"] if b["tensor"] >= 0}
    top = {r["name"]: (r["offset"], r["size_bytes"]) for r in a["regions"] if r["kind"] == "metadata"}
    for t in plan["tail"]["regions"][:3]:
        assert top[t["what"]] == (t["offset"], t["size"]), (t, top)


def test_a_store_access_fault():
    """Scenario 6 with standin_wild_address set here: the second inference's first kernel stores
    its output there, where QEMU virt has no memory. GDB's own registers say mcause 7 and mtval
    that address; `arena fault` decodes the same from the core in trap_handler."""
    wild = 0x90000040
    got, uart, _text = session(6, "trap_handler", sets=[f"set var standin_wild_address = {wild:#x}"])
    assert "AllocateTensors ok" in uart, uart
    regs = got["registers"]
    mcause, mepc, mtval = (info_register(regs, n) for n in ("mcause", "mepc", "mtval"))
    assert (mcause, mtval) == (7, wild), regs
    fault = got["fault"]
    assert "store/AMO access fault: from core registers (halted in the trap handler, mtvec)" in fault, fault
    assert "  mcause 0x00000007: exception 7, store/AMO access fault\n" in fault, fault
    assert f"  mepc {mepc:#010x}: the trapping instruction\n" in fault, fault
    assert f"  mtval {wild:#010x}: the faulting address\n" in fault, fault
    assert re.search(rf"faulting PC: {mepc:#x} in memset\b", fault), fault   # the kernel's memset
    assert "the core is stuck in trap_handler's endless loop" in fault, fault
    # Not the stack, not TFLM's objects (sound, the allocation finished): the code at mepc.
    assert "VERDICT: none of these: the stack stayed above its limit" in fault, fault
    check = got["check"]
    assert "FAIL  fault      store/AMO access fault this boot" in check and "arena check: FAIL (1 fail" in check, check


def test_the_stack_run_into_the_arena_then_a_trap(plan, symbols):
    """Scenario 3, the recursion 600 B below the stack's limit: the next Invoke follows the words
    the frames left in the eval tensors and the node array, and traps. GDB gives the trap's
    registers; `arena fault` gives the same and says the stack ran into the arena, naming the tail's
    top objects at the addresses the planner's layout puts them."""
    got, uart, _text = session(3, "trap_handler", sets=["set var standin_stack_overrun_bytes = 600"])
    assert "recursion returned" in uart and "invoke after the recursion returned" not in uart, uart
    regs = got["registers"]
    mcause, mepc, mtval = (info_register(regs, n) for n in ("mcause", "mepc", "mtval"))
    assert mcause in (1, 5, 7), regs   # an access fault: fetch, load or store
    fault = got["fault"]
    assert f"  mcause {mcause:#010x}: exception {mcause}, " in fault, fault
    assert f"  mepc {mepc:#010x}: the trapping instruction\n" in fault, fault
    assert f"  mtval {mtval:#010x}: the faulting address\n" in fault, fault
    assert "VERDICT: the stack ran into the arena" in fault, fault
    assert_overwritten(plan, symbols, fault)
    assert got["snap"]["tflm"]["condition"] == "smashed", got["snap"]["tflm"]


def test_the_stack_run_into_the_arena_with_no_trap(plan, symbols):
    """Scenario 3 at its default 200 B: on RV32 the frames leave SubgraphAllocations' words in
    locals they never write, so the next Invoke completes and the application ends in
    allocation_failed(). No trap, yet `arena fault` finds TFLM's objects overwritten by the stack."""
    got, uart, _text = session(3, "allocation_failed")
    assert "invoke after the recursion returned" in uart, uart
    assert info_register(got["registers"], "mcause") == 0, got["registers"]   # no trap was ever taken
    fault = got["fault"]
    assert "arena fault: no fault: the core is not in a fault handler" in fault, fault
    assert "VERDICT: the stack ran into the arena" in fault, fault
    assert_overwritten(plan, symbols, fault)


def assert_overwritten(plan, symbols, fault):
    """The tail's objects wholly within the top 150 B of the arena (its end is the stack's limit),
    which any overrun past 200 B covers, are each named as overwritten at their address."""
    objects = tail_objects(plan, symbols["tensor_arena"])
    limit = symbols["__stack"] - symbols["__stack_size"]
    assert symbols["tensor_arena"] + plan["arena"]["recommended_bytes"] == limit
    top = {w: a for w, a in objects.items() if a >= limit - 150}
    assert {"SingleArenaBufferAllocator", "GreedyMemoryPlanner", "MicroAllocator"} <= set(top), top
    for what, addr in top.items():
        assert f"overwritten: {what} at {addr:#x}" in fault, fault
