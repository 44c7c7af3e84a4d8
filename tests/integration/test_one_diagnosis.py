"""One diagnosis from every source (issue 33): each broken scenario of the TFLM STAND-IN
(examples/tflm_standin/, NOT TensorFlow Lite Micro) on real QEMU mps2-an386 under real
gdb-multiarch, read three ways at the same stop:
- live: `arena fault --json` and `arena snapshot` in GDB on the running target;
- a RAM dump: GDB's `dump binary memory` of the RAM and `info registers`, read afterwards by the
  standalone tool (`arenascope fault --json --ram ... --registers ...`) and by GDB holding only
  the ELF (`arena dump load`, then `arena fault --json`);
- the snapshot: its fault's verdicts (or TFLM's, without a fault), what the viewer and the
  HTML report draw.
Every source must give the same verdicts (kind and headline), and each scenario's verdict is the
one its ending calls for, checked against facts taken here independently of the plugin: the UART,
GDB's own unwinder (`bt`) and registers, and for the stack's reach the SP of the deepest
recursion frame, read by GDB at a breakpoint placed from arm-none-eabi-objdump's disassembly."""
import json
import os
import pathlib
import re
import subprocess
import tempfile

import jsonschema
import pytest

from harness import BUILD, PLANNER, ROOT, elf_symbols, fault_register, gdb_batch, plan_json, qemu

ELF = BUILD / "firmware" / "tflm_standin" / "tflm_standin_fw.elf"
PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
CLI = ROOT / "gdbplugin" / "arenascope"
pytestmark = [pytest.mark.skipif(not PLANNER.exists(), reason=f"{PLANNER} not built")]
standin = pytest.mark.skipif(not ELF.exists(), reason=f"{ELF} not built (bash tools/build.sh)")
# Optional: real TFLM firmware built by hand (docs/integrating-tflm.md, "The recipe for such
# firmware"), named as tests/integration/test_tflm_postmortem_real.py names them, each with the
# breakpoint where it ends; the verdict kind each must give.
REAL = [("ARENASCOPE_TFLM_STACK_ELF", "HardFault_Handler", "stack-into-arena"),
        ("ARENASCOPE_TFLM_STACK_SAVESP_ELF", "HardFault_Loop", "stack-into-arena"),
        ("ARENASCOPE_TFLM_UNDERSIZED_ELF", "allocation_failed", "allocation-failed"),
        ("ARENASCOPE_TFLM_IGNORED_ELF", "HardFault_Handler", "failure-ignored"),
        ("ARENASCOPE_TFLM_HANG_ELF", "AbortImpl", "allocation-failed"),
        ("ARENASCOPE_TFLM_CRASH_ELF", "HardFault_Handler", "allocation-failed")]


def ram_range(elf=ELF):
    """[low, high) covering the ELF's RAM sections and its stack (up to __StackTop)."""
    from elftools.elf.constants import SH_FLAGS
    from elftools.elf.elffile import ELFFile
    with open(elf, "rb") as f:
        ram = [(s["sh_addr"], s["sh_addr"] + s["sh_size"]) for s in ELFFile(f).iter_sections()
               if s["sh_flags"] & SH_FLAGS.SHF_ALLOC and s["sh_flags"] & SH_FLAGS.SHF_WRITE and s["sh_size"]]
    syms = elf_symbols(elf)
    return min(r[0] for r in ram), max(max(r[1] for r in ram), syms["__StackTop"])


def recursion_floor_break(limit, overrun):
    """A breakpoint at the instruction after standin_recurse's `sub sp, #N` that stops only in the
    deepest frame (its SP at or below limit - overrun: the recursion's own test), from objdump."""
    out = subprocess.run(["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", str(ELF)], capture_output=True,
                         text=True, check=True).stdout
    body = out[out.index("<_ZN12_GLOBAL__N_115standin_recurseEm>:"):]
    body = body[:body.index("\n\n")]
    addrs = [(int(m.group(1), 16), m.group(2)) for m in re.finditer(r"^\s+([0-9a-f]+):\s+(.*)$", body, re.M)]
    i = next(i for i, (_, ins) in enumerate(addrs) if re.match(r"sub\s+sp, #\d+", ins))
    return f"break *{addrs[i + 1][0]:#x} if $sp <= {limit - overrun:#x}"


def run(scenario, stops, sets=(), before=(), elf=ELF, keep=None):
    """Boots the stand-in, sets the scenario, stops as `stops` says, and reads it live, dumps it,
    then reads the dump with the tool and with GDB alone. Returns {source: fault --json doc},
    the live snapshot, GDB's output and the UART. scenario None: another firmware `elf` (real
    TFLM: semihosting), run straight to `stops`."""
    lo, hi = ram_range(elf)
    boot = [] if scenario is None else ["break standin_boot", "continue", "delete",
                                        f"set var standin_scenario = {scenario}", *[f"set var {s}" for s in sets]]
    with tempfile.TemporaryDirectory() as tmp, qemu(elf, semihosting=scenario is None) as (port, uart):
        d = pathlib.Path(tmp)
        cmds = ["set pagination off", "set confirm off", *boot, *before, *stops,
                f"dump binary memory {d / 'ram.bin'} {lo:#x} {hi:#x}",
                f"python open('{d / 'regs.txt'}', 'w').write(gdb.execute('info registers', to_string=True))",
                "echo BT-START\\n", "bt", "echo BT-END\\n",
                f"source {PLUGIN}", "set arena colour off", f"set arena planner-path {PLANNER}",
                "set logging overwrite on", "set logging redirect on", f"set logging file {d / 'live.json'}",
                "set logging enabled on", "arena fault --json", "set logging enabled off",
                f"arena snapshot {d / 'snap.json'}"]
        _, text = gdb_batch(elf, cmds, remote_port=port, timeout=180)
        docs = {"live": json.loads((d / "live.json").read_text())}
        spec = f"{d / 'ram.bin'}@{lo:#x}"
        proc = subprocess.run([str(CLI), "fault", "--json", "--elf", str(elf), "--planner", str(PLANNER), "--ram",
                               spec, "--registers", str(d / "regs.txt")], capture_output=True, text=True,
                              timeout=120, env=dict(os.environ, NO_COLOR="1"), stdin=subprocess.DEVNULL)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        docs["dump (tool)"] = json.loads(proc.stdout)
        _, text2 = gdb_batch(elf, [f"source {PLUGIN}", "set arena colour off", f"set arena planner-path {PLANNER}",
                                   f"arena dump load {spec} --registers {d / 'regs.txt'}",
                                   "set logging overwrite on", "set logging redirect on",
                                   f"set logging file {d / 'dump.json'}", "set logging enabled on",
                                   "arena fault --json", "set logging enabled off"], args=())
        docs["dump (gdb)"] = json.loads((d / "dump.json").read_text())
        if keep is not None:  # the dump and registers, for a test that reads them again
            keep.write_bytes((d / "ram.bin").read_bytes())
            keep.with_suffix(".regs").write_text((d / "regs.txt").read_text())
        snap = json.loads((d / "snap.json").read_text())
        return docs, snap, text + text2, uart.read_text(errors="replace")


def verdicts(doc):
    return [(v["kind"], v["headline"]) for v in doc["verdicts"]]


def snapshot_verdicts(snap):
    fault = snap.get("fault")
    return [(v["kind"], v["headline"]) for v in (fault["verdicts"] if fault else snap["tflm"]["verdicts"])]


def same_everywhere(docs, snap, text):
    """The verdicts and the fault's presence agree across every source; returns the verdicts."""
    jsonschema.validate(snap, json.loads((ROOT / "docs" / "snapshot-schema.json").read_text()))
    want = verdicts(docs["live"])
    assert want, (docs["live"], text[-3000:])
    for source, doc in docs.items():
        assert doc["verdict"] == "FAIL", (source, doc)
        assert verdicts(doc) == want, (source, verdicts(doc), want)
        assert (doc["fault"] is None) == (docs["live"]["fault"] is None), (source, doc["fault"], doc["note"])
    assert snapshot_verdicts(snap) == want
    assert snap["verdict"] == "FAIL"
    return want


def gdb_frames(text):
    bt = text[text.index("BT-START"):text.index("BT-END")]
    return re.findall(r"^#\d+\s+(?:0x[0-9a-f]+ in )?([\w:~<>()\[\] ]+?) \(", bt, re.M)


@pytest.fixture(scope="module")
def plan():
    return plan_json()


def short_size(plan):
    return plan["arena"]["minimum_bytes"] - 300


@standin
def test_allocation_failed_and_the_status_checked(plan):
    docs, snap, text, uart = run(1, ["break allocation_failed", "continue"],
                                 [f"standin_arena_bytes = {short_size(plan)}"])
    (kind, headline), = same_everywhere(docs, snap, text)
    assert kind == "allocation-failed" and "it returned kTfLiteError" in headline, headline
    assert "Failed to resize buffer" in uart and docs["live"]["fault"] is None


@standin
def test_allocation_aborted_inside_tflm(plan):
    """TFLITE_ABORT: AbortImpl prints HALTED and spins; a dump must not say it returned."""
    docs, snap, text, uart = run(1, ["break *((char*)AbortImpl + 8)", "continue"],
                                 [f"standin_arena_bytes = {short_size(plan)}", "standin_on_failure = 1"])
    assert "HALTED" in uart
    frames = gdb_frames(text)
    assert frames[0] == "AbortImpl" and "tflite::MicroInterpreter::AllocateTensors" in frames, frames
    (kind, headline), = same_everywhere(docs, snap, text)
    assert kind == "allocation-failed" and "TFLM hangs inside it" in headline, headline
    assert "returned kTfLiteError" not in headline


@standin
def test_allocation_crashed_inside_tflm(plan):
    """The failed request's null followed: a precise BusFault at 0xfffffff0 inside AllocateTensors.
    The dump has no System Control Block: the fault is the registers file's (xPSR), its CFSR
    unknown, and the verdict the same as live."""
    docs, snap, text, _ = run(1, ["hbreak HardFault_Handler", "continue"],
                              [f"standin_arena_bytes = {short_size(plan)}", "standin_on_failure = 2"])
    (kind, headline), = same_everywhere(docs, snap, text)
    assert kind == "allocation-failed" and "TFLM crashed inside it" in headline, headline
    live, dumped = docs["live"]["fault"], docs["dump (tool)"]["fault"]
    assert live["exception"] == dumped["exception"] == "HardFault"
    assert fault_register(live, "CFSR") == 0x8200 and fault_register(live, "BFAR") == 0xFFFFFFF0, live
    assert fault_register(dumped, "CFSR") is None and fault_register(dumped, "HFSR") is None and \
        "a RAM dump holds no System Control Block" in dumped["bits"][0], dumped
    assert dumped["frame"] == live["frame"]
    assert fault_register(dumped, "EXC_RETURN") == fault_register(live, "EXC_RETURN") == 0xFFFFFFF9


@standin
def test_allocation_failed_and_the_status_ignored(plan):
    docs, snap, text, _ = run(2, ["break invoke_failed", "continue"], [f"standin_arena_bytes = {short_size(plan)}"])
    (kind, headline), = same_everywhere(docs, snap, text)
    assert kind == "failure-ignored", headline


@standin
@pytest.mark.parametrize("scenario,stop", [(3, "hbreak HardFault_Handler"), (4, "hbreak standin_fault_loop")])
def test_stack_into_the_arena_and_its_reach(scenario, stop, tmp_path):
    """The recursion runs standin_stack_overrun_bytes (200) past __StackLimit: its deepest frame's
    SP, read by GDB there, is how far the stack reached; the arena ends at the limit, so that many
    bytes into the arena, into the tail object holding that address (the planner's tail layout)."""
    syms = elf_symbols(ELF)
    limit = syms["__StackLimit"]
    sa = next(t for t in plan_json()["tail"]["regions"] if t["what"].startswith("SubgraphAllocations"))
    sa_word = syms["tensor_arena"] + sa["offset"] + 4   # its eval-tensors pointer (TfLiteEvalTensor*)
    docs, snap, text, _ = run(scenario, ["echo FLOOR\\n", "p/x $sp", "delete", stop, "continue",
                                         f"python w = int(gdb.parse_and_eval('*(unsigned *){sa_word:#x}')); "
                                         f"print('WORD {sa_word:#x}: %#x' % w); "
                                         "print('WORD pointee: %#x' % int(gdb.parse_and_eval('*(unsigned *)%d' % w)))"],
                              before=[recursion_floor_break(limit, 200), "continue"], keep=tmp_path / "ram.bin")
    floor = int(re.search(r"FLOOR\n\$\d+ = (0x[0-9a-f]+)", text).group(1), 16)
    reach = limit - floor
    assert 200 <= reach < 240, reach
    got = same_everywhere(docs, snap, text)
    kind, headline = got[0]
    assert kind == "stack-into-arena", got
    base = syms["tensor_arena"]
    tail = sorted(((base + t["offset"], t["size"], t["what"]) for t in plan_json()["tail"]["regions"]),
                  reverse=True)
    into = next(t for t in tail if t[0] <= floor < t[0] + t[1])
    assert headline.startswith(f"VERDICT: the stack ran into the arena: {reach} B past its limit, {reach} B into "
                               f"the arena, down into {into[2]} (+{floor - into[0]} of it),"), headline
    # The BusFault's address is the word the code read through the pointer the stack left in
    # SubgraphAllocations (its eval-tensors pointer), checked with GDB's own reads below.
    sa = next(t for t in tail if t[2].startswith("SubgraphAllocations"))
    evidence = " ".join(docs["live"]["fault"]["verdicts"][0]["evidence"])
    m = re.search(r"the faulting address \(BFAR\) (0x[0-9a-f]+) is the word at (0x[0-9a-f]+), read through "
                  r"(0x[0-9a-f]+), the value the stack left at (0x[0-9a-f]+) in ([^:]+):", evidence)
    assert m and m.group(5) == sa[2] and sa[0] <= int(m.group(4), 16) < sa[0] + sa[1], evidence
    assert m.group(2) == m.group(3) and int(m.group(1), 16) == fault_register(docs["live"]["fault"], "BFAR"), evidence
    words = dict(re.findall(r"WORD (\S+): (0x[0-9a-f]+)", text))
    assert int(words[m.group(4)], 16) == int(m.group(3), 16), words  # the stack's value there, as GDB reads it
    assert int(words["pointee"], 16) == int(m.group(1), 16), words  # and what it points at is the BFAR
    # The fault's own facts agree too; GDB's unwinder is the independent caller.
    frames = gdb_frames(text)
    faulting = frames.index("(anonymous namespace)::standin_kernel_invoke")
    assert frames[faulting + 1] == "tflite::MicroInterpreterGraph::InvokeSubgraph", frames
    for source, doc in docs.items():
        f = doc["fault"]
        assert fault_register(f, "EXC_RETURN") == 0xFFFFFFF9, (source, f["registers"], f["source"])
        assert f["frame"] == docs["live"]["fault"]["frame"], source
        # The stacked LR returns into the faulting function itself (a call it made earlier): stale.
        assert f["lr_where"].startswith(f"{f['frame']['lr']:#010x} is stale"), (source, f["lr_where"])
        assert "caller: " in f["lr_where"] and "in tflite::MicroInterpreterGraph::InvokeSubgraph(int) + " in \
            f["lr_where"], (source, f["lr_where"])
    # A dump 16 B short at the stack's top, read without the registers file: the stack's paint
    # cannot be scanned and the core's state is unknown, yet the arena still tells the same verdict
    # (a trial found the truncated dump refused whole, and then a confident "not the arena").
    if scenario == 3:
        lo, _hi = ram_range()
        short = tmp_path / "short.bin"
        short.write_bytes((tmp_path / "ram.bin").read_bytes()[:-16])
        proc = subprocess.run([str(CLI), "fault", "--json", "--elf", str(ELF), "--planner", str(PLANNER), "--ram",
                               f"{short}@{lo:#x}"], capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
        doc = json.loads(proc.stdout)
        assert proc.returncode == 0 and "the stack's paint cannot be scanned" in proc.stderr, proc.stderr
        assert [(v["kind"], v["headline"]) for v in doc["verdicts"]] == got[:1], doc["verdicts"]
        assert doc["fault"] is None and "the core's registers are unknown" in doc["note"] + " ".join(doc["notes"]) \
            or doc["note"].startswith("there is no agent fault record"), doc


@standin
def test_the_tools_json_error_is_a_json_document(tmp_path):
    """A --json run that fails prints its error as the one document on stdout (and on stderr as
    without --json), exit status 2."""
    missing = f"{tmp_path / 'none.bin'}@0x20000000"
    proc = subprocess.run([str(CLI), "fault", "--json", "--elf", str(ELF), "--ram", missing], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 2 and doc["command"] == "fault" and "none.bin" in doc["error"], proc
    assert doc["error"] in proc.stderr
    assert "fault" not in doc and "verdicts" not in doc


@pytest.mark.parametrize("variable,stop,kind", REAL, ids=[r[0] for r in REAL])
def test_real_tflm_gives_one_diagnosis_from_every_source(variable, stop, kind):
    """Optional (skips without the variable): the same comparison on real TFLM firmware. The hang
    is stopped at AbortImpl's loop (`b .`, found by objdump), as a board left hanging is."""
    path = os.environ.get(variable)
    if not path or not pathlib.Path(path).exists():
        pytest.skip(f"{variable} names no real TFLM firmware (optional)")
    stops = [f"hbreak {stop}", "continue"]
    if stop == "AbortImpl":
        out = subprocess.run(["arm-none-eabi-objdump", "-d", path], capture_output=True, text=True, check=True).stdout
        body = out[out.index("<_Z9AbortImplv>:"):]
        loop = re.search(r"^\s+([0-9a-f]+):\s+e7fe\s", body, re.M)
        stops = [f"hbreak *{int(loop.group(1), 16):#x}", "continue"]
    docs, snap, text, _ = run(None, stops, elf=pathlib.Path(path))
    got = same_everywhere(docs, snap, text)
    assert got[0][0] == kind, got
    assert not any("returned kTfLiteError" in h for _, h in got) or stop == "allocation_failed", got
