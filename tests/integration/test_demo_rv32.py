"""The demo firmware built for RV32 (examples/demo/rv32/: rv32imac, ilp32, machine mode, picolibc):
demo_rv32_fw.elf on real `qemu-system-riscv32 -M virt -bios none` under real gdb-multiarch with the
plugin. The same workload as the Cortex-M4 demo (examples/demo/workload.c), its arena laid out from
`arenascope-plan --header --target riscv32 --margin 15` right below picolibc's stack with a 256 B
guard band between them (virt_rv32_demo.ld), the agent's fault record in picolibc's .preserve and
mtvec at the agent's trap entry. The scenario is set from GDB at demo_invoke_done (`set var
demo_scenario = N`), as the Cortex-M4 demo's tests do:

- healthy (0): `arena info`'s bounds are the ELF's tensor_arena, its head, tail, used and peak the
  planner's riscv32 figures (run here; not its cortex-m ones), `arena check` PASS, no fault;
- the store to 0x90000000, where virt has no memory (3): the agent's record (decoded here from its
  bytes at the ABI fixture's offsets) and GDB's own `info registers mcause mepc mtval` say mcause 7,
  mtval 0x90000000, and `arena fault` reads the fault from the record at arenascope_fault_record;
- the stack run into the arena (1): the recursion returns, the next invoke calls through the
  operator table it overwrote and traps; `arena fault` says the stack ran into the arena and names
  exactly the tail regions whose bytes no longer match the agent's region checksums (FNV-1a computed
  here over the arena GDB read);
- an illegal instruction (5) and a null call (7) trap with their mcause; a division by zero (6)
  does not trap on RISC-V, and the firmware says so.

Every expected figure is computed here, never taken from the plugin: the planner's JSON, the
generated plan header, the ELF's symbols and sections (pyelftools), the source's lines, GDB's own
registers and memory."""
import json
import re
import subprocess

import pytest

from harness import (
    BAD_OUTPUT,
    BUILD,
    DEMO_MODEL,
    PLANNER,
    ROOT,
    RV32_VIRT,
    decode_fault_record,
    elf_symbols,
    figure,
    fnv1a,
    gdb_batch,
    info_register,
    plan_json,
    qemu,
    rv32_firmware_skip,
)

ELF = BUILD / "firmware" / "demo_rv32" / "demo_rv32_fw.elf"
PLAN_HEADER = BUILD / "demo_plan_rv32" / "arenascope_plan.h"
MAIN_C = ROOT / "examples" / "demo" / "rv32" / "main.c"
WORKLOAD_C = ROOT / "examples" / "demo" / "workload.c"
PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
TEMP_BYTES = 64      # the demo's first operator takes 64 B of temp above the head (demo_plan.h)
GUARD_BYTES = 256    # DEMO_GUARD_BYTES
RECORD_BYTES = 100   # the fault record on a 32-bit target (target_agent/abi/agent_abi_v1.json)
ARCH_RISCV = 1       # fault.h ARENASCOPE_FAULT_ARCH_RISCV

pytestmark = rv32_firmware_skip(ELF)


@pytest.fixture(scope="module")
def plan():
    """The planner's riscv32 JSON for the demo's model, with the margin the build asks for."""
    r = subprocess.run([str(PLANNER), "--json", "--target", "riscv32", "--margin", "15", str(DEMO_MODEL)],
                       capture_output=True, text=True, timeout=60, check=True)
    doc = json.loads(r.stdout)
    assert doc["target"] == "riscv32"
    return doc


@pytest.fixture(scope="module")
def symbols():
    return elf_symbols(ELF)


def source_line(path, text):
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def session(scenario, stop, commands=("info", "check", "fault"), reads=()):
    """Boots the RV32 demo halted, runs to the end of the first measured invoke, sets demo_scenario
    there, runs to the breakpoint `stop`, then GDB's `info registers mcause mepc mtval` and each
    `arena` command of `commands`, each after a marker line; dumps `reads` (gdb_probe.py). Returns
    ({"registers": ..., command: its output}, the probe's dump, QEMU's stdout (the firmware's
    semihosted output), GDB's whole output)."""
    with qemu(ELF, semihosting=True, **RV32_VIRT) as (port, out):
        cmds = ["set pagination off", "set confirm off", f"source {PLUGIN}", f"set arena planner-path {PLANNER}",
                "set arena colour off", "break demo_invoke_done if invokes == 1", "continue", "delete",
                f"set var demo_scenario = {scenario}", f"break {stop}", "continue"]
        parts = [("registers", "info registers mcause mepc mtval"), *((c, f"arena {c}") for c in commands)]
        for name, command in parts:
            cmds += [f"echo @@{name}@@\\n", command]
        cmds.append("echo @@end@@\\n")
        dump, text = gdb_batch(ELF, cmds, reads, remote_port=port, timeout=180)
        firmware_out = out.read_text(errors="replace")
    assert not BAD_OUTPUT.search(text), text
    got = {name: text.split(f"@@{name}@@\n", 1)[1].split("@@", 1)[0] for name, _ in parts}
    for name, _ in parts[1:]:
        assert got[name].strip(), f"`{name}` printed nothing:\n{text[-3000:]}"
    return got, dump, firmware_out, text




def header_define(name):
    m = re.search(rf"^#define {name} (\d+)u?\b", PLAN_HEADER.read_text(), re.M)
    assert m, (name, PLAN_HEADER)
    return int(m.group(1))


def test_the_firmware_is_laid_out_from_the_riscv32_plan_below_picolibcs_stack(plan, symbols):
    """The plan header the build generated is the riscv32 one (its figures are the planner's riscv32
    JSON, which differ from its cortex-m ones); tensor_arena has its recommended size, then the guard
    band, then picolibc's .stack (__stack - __stack_size .. __stack); the fault record is in .preserve,
    which picolibc's crt0 does not zero."""
    size, head, tail = plan["arena"]["recommended_bytes"], plan["plans"]["tflm-greedy"]["head_bytes"], plan["tail"][
        "bytes"]
    assert (header_define("ARENASCOPE_PLAN_RECOMMENDED_ARENA_BYTES"), header_define("ARENASCOPE_PLAN_HEAD_BYTES"),
            header_define("ARENASCOPE_PLAN_TAIL_BYTES")) == (size, head, tail)
    assert "target riscv32" in PLAN_HEADER.read_text().splitlines()[0]
    arm = plan_json("--margin", "15")
    assert (arm["tail"]["bytes"], arm["arena"]["recommended_bytes"]) != (tail, size), "the figures would not tell"
    from elftools.elf.elffile import ELFFile
    with open(ELF, "rb") as f:
        elf = ELFFile(f)
        sym = {s.name: s for s in elf.get_section_by_name(".symtab").iter_symbols() if s.name}
        sections = {s.name: (s["sh_addr"], s["sh_size"]) for s in elf.iter_sections()}
    assert sym["tensor_arena"]["st_size"] == size and symbols["tensor_arena"] % 16 == 0
    assert sections[".tensor_arena"] == (symbols["tensor_arena"], size)
    assert symbols["__guard_start"] == symbols["tensor_arena"] + size
    assert symbols["__guard_end"] - symbols["__guard_start"] == GUARD_BYTES
    low = symbols["__stack"] - symbols["__stack_size"]
    assert sections[".stack"] == (low, symbols["__stack_size"]) and low == symbols["__guard_end"]
    preserve = sections[".preserve"]
    assert preserve[0] <= symbols["arenascope_fault_record"] < preserve[0] + preserve[1]
    assert sym["arenascope_fault_record"]["st_size"] == RECORD_BYTES


def test_healthy(plan, symbols):
    """Scenario 0, stopped after the first measured invoke: the arena the agent publishes is at the
    ELF's tensor_arena with the planner's riscv32 size; head and tail are the plan's, used and peak
    the head, the 64 B of temp above it and the tail; the stack and guard band are the linker's;
    every check passes; no fault, and the agent's record (zeroed at boot: arch 0) is not one."""
    got, _, firmware_out, _ = session(0, "demo_invoke_done if invokes == 2")
    assert "arena ready, running inferences" in firmware_out, firmware_out
    size, head, tail = plan["arena"]["recommended_bytes"], plan["plans"]["tflm-greedy"]["head_bytes"], plan["tail"][
        "bytes"]
    used = head + TEMP_BYTES + tail
    info = got["info"]
    base = symbols["tensor_arena"]
    assert re.search(rf"^\s*bounds:\s+{base:#x}-{base + size:#x}, size {size} B", info, re.M), info
    assert (figure(info, "head (planned)"), figure(info, "tail (persistent)")) == (head, tail), info
    assert (figure(info, "used"), figure(info, "peak")) == (used, used), info
    assert f"tail (persistent):      {tail} B ({tail / 1024:.1f} KiB), +{size - tail}..+{size}" in info, info
    low, top = symbols["__stack"] - symbols["__stack_size"], symbols["__stack"]
    assert f"stack:                    {low:#x}-{top:#x}, size {symbols['__stack_size']} B" in info, info
    guard = symbols["__guard_start"]
    assert f"guard band:               {guard:#x}-{guard + GUARD_BYTES:#x}, {GUARD_BYTES} B of {GUARD_BYTES} B intact" \
        in info, info
    check = got["check"]
    assert "arena check: PASS" in check and "FAIL" not in check, check
    assert "arena fault: no fault: the core is not in a fault handler, and the agent's record has no fault this " \
           "boot" in got["fault"], got["fault"]


def test_a_store_to_unmapped_memory_is_read_from_the_agents_record(symbols):
    """Scenario 3: main.c's store to 0x90000000 traps (store/AMO access fault); the agent's trap entry
    records it and halts in arenascope_fault_hook. The record's bytes (decoded here: arch 1, mcause in
    its cfsr word, mtval in mmfar, mepc in bfar, a valid checksum) and GDB's own CSRs agree, and
    `arena fault` says the fault came from the record at the ELF's arenascope_fault_record."""
    record = symbols["arenascope_fault_record"]
    got, dump, firmware_out, _ = session(3, "arenascope_fault_hook", commands=("fault", "check"),
                                         reads=[("record", "&arenascope_fault_record", RECORD_BYTES)])
    assert "arenascope demo: scenario 3" in firmware_out, firmware_out
    regs = got["registers"]
    mcause, mepc, mtval = (info_register(regs, n) for n in ("mcause", "mepc", "mtval"))
    assert (mcause, mtval) == (7, 0x90000000), regs
    rec = decode_fault_record(bytes.fromhex(dump["mem"]["record"]), 4)
    assert rec["_checksum_ok"] and rec["arch"] == ARCH_RISCV, rec
    assert (rec["cfsr"], rec["mmfar"], rec["bfar"]) == (mcause, mtval, mepc), rec
    assert (rec["fault_count"], rec["fault_boot"]) == (1, rec["boot_count"]), rec
    fault = got["fault"]
    assert f"store/AMO access fault: from the agent's fault record at {record:#x} (this boot, fault 1)" in fault, fault
    assert "  mcause 0x00000007: exception 7, store/AMO access fault\n" in fault, fault
    assert f"  mepc {mepc:#010x}: the trapping instruction\n" in fault, fault
    assert "  mtval 0x90000000: the faulting address\n" in fault, fault
    line = source_line(MAIN_C, "UNMAPPED_ADDRESS = 0u")
    assert re.search(rf"faulting PC: {mepc:#x} in provoke \+ \d+ at \S+/rv32/main\.c:{line}$", fault, re.M), fault
    assert "VERDICT: not the arena and not the stack" in fault, fault
    check = got["check"]
    assert "FAIL  fault      store/AMO access fault this boot" in check and "arena check: FAIL (1 fail" in check, check


def test_the_stack_run_into_the_arena_is_named_with_what_it_overwrote(plan, symbols):
    """Scenario 1: the recursion runs the stack through the guard band into the arena's tail and
    returns; the next invoke calls through the operator table (NodeAndRegistration[], in the tail) it
    overwrote and traps. GDB's CSRs are the record's; `arena fault` says the stack ran into the arena
    and names exactly the tail regions whose bytes no longer match the agent's region checksums,
    computed here (FNV-1a over the arena GDB read), among them the tail's top and the operator table."""
    size = plan["arena"]["recommended_bytes"]
    count = len(plan["buffers"]) + len(plan["tail"]["regions"])
    reads = [("record", "&arenascope_fault_record", RECORD_BYTES), ("arena", "&tensor_arena", size),
             ("sums", "arenascope_fault_record.checksums_addr", 4 * count)]
    got, dump, firmware_out, _ = session(1, "arenascope_fault_hook", commands=("fault", "check"), reads=reads)
    assert "arenascope demo: scenario 1" in firmware_out, firmware_out
    regs = got["registers"]
    mcause, mepc, mtval = (info_register(regs, n) for n in ("mcause", "mepc", "mtval"))
    rec = decode_fault_record(bytes.fromhex(dump["mem"]["record"]), 4)
    assert rec["_checksum_ok"] and rec["arch"] == ARCH_RISCV and rec["checksum_count"] == count, rec
    assert (rec["cfsr"], rec["mmfar"], rec["bfar"]) == (mcause, mtval, mepc), rec
    fault = got["fault"]
    assert f"  mcause {mcause:#010x}: exception {mcause}, " in fault, fault
    assert f"  mepc {mepc:#010x}: the trapping instruction\n" in fault, fault
    # The trap is the invoke's call through the table: at it, or (a fetch from the pointer it loaded) just after.
    call = source_line(WORKLOAD_C, "registration->invoke(&nodes[op])")
    assert (re.search(rf"faulting PC: {mepc:#x} in demo_invoke \+ \d+ at \S+workload\.c:{call}$", fault, re.M) or
            re.search(rf"RA: +0x[0-9a-f]+ \(return address: the call is at \S+workload\.c:{call}, in demo_invoke",
                      fault)), fault

    # Which checksummed regions changed since allocation: the agent's table against the arena's bytes now.
    arena, sums = bytes.fromhex(dump["mem"]["arena"]), bytes.fromhex(dump["mem"]["sums"])
    tail = plan["tail"]["regions"]
    changed, intact = [], []
    for i, t in enumerate(tail):
        want = int.from_bytes(sums[4 * (len(plan["buffers"]) + i):][:4], "little")
        if want:
            (changed if fnv1a(arena[t["offset"]:t["offset"] + t["size"]]) != want else intact).append(t)
    top = tail[0]
    table = next(t for t in tail if t["role"] == "node-and-registration")
    assert top["offset"] + top["size"] == size and top in changed and table in changed, changed
    assert table["size"] == 32 * len(plan["subgraphs"][0]["operators"])   # demo_node_t: 32 B, as on Arm
    verdict = fault[fault.index("VERDICT: the stack ran into the arena."):].split("\n", 1)[0]
    assert f"Its paint is gone to the limit {symbols['__stack'] - symbols['__stack_size']:#x}" in verdict, verdict
    m = re.search(r"overwritten since allocation: (.*?)\. A stack", verdict)
    assert m, verdict
    named = re.findall(r"\+(\d+)\.\.\+(\d+)\)", m.group(1))
    assert sorted((int(a), int(b)) for a, b in named) == sorted((t["offset"], t["offset"] + t["size"])
                                                               for t in changed), (m.group(1), changed)
    for t in changed:
        assert f"{t['what']} (+{t['offset']}..+{t['offset'] + t['size']})" in m.group(1), (t["what"], m.group(1))
    # What the frames passed over unwritten (a frame's alignment padding) is not blamed on another writer.
    assert "most likely not by the stack" not in fault, fault
    check = got["check"]
    for rule in ("guard", "stack", "fault"):
        assert re.search(rf"^\s*FAIL  {rule} ", check, re.M), check


@pytest.mark.parametrize("scenario,mcause,name", [(5, 2, "illegal instruction"),
                                                  (7, 1, "instruction access fault")])
def test_an_illegal_instruction_and_a_null_call_trap(scenario, mcause, name):
    """Scenario 5 (`unimp`) and scenario 7 (a call through a null pointer): each traps with the
    mcause GDB reads, and `arena fault` gives it from the agent's record."""
    got, _, _, _ = session(scenario, "arenascope_fault_hook", commands=("fault",))
    regs = got["registers"]
    assert info_register(regs, "mcause") == mcause, regs
    fault = got["fault"]
    assert f"{name}: from the agent's fault record at " in fault and "(this boot, fault 1)" in fault, fault
    if scenario == 5:
        line = source_line(MAIN_C, '"unimp"')
        mepc = info_register(regs, "mepc")
        assert re.search(rf"faulting PC: {mepc:#x} in provoke \+ \d+ at \S+/rv32/main\.c:{line}$", fault, re.M), fault
    else:
        assert info_register(regs, "mepc") == 0 and "faulting PC: 0x0: a null pointer" in fault, fault
    assert "VERDICT: not the arena and not the stack" in fault, fault


def test_a_division_by_zero_does_not_trap_on_risc_v():
    """Scenario 6: RISC-V's divide gives all ones for a zero divisor and no trap (the M extension);
    the firmware says so and runs on to the next invoke, with no fault."""
    got, _, firmware_out, _ = session(6, "demo_invoke_done if invokes == 3", commands=("fault",))
    assert "1 / 0 = 0xffffffff: no trap on RISC-V" in firmware_out, firmware_out
    assert info_register(got["registers"], "mcause") == 0, got["registers"]
    assert "arena fault: no fault" in got["fault"], got["fault"]
