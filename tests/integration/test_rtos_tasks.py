"""RTOS task stacks (issue 19): `arena stack`, `arena check`, `arena fault` and the snapshot on the
project's FreeRTOS stand-in (tests/firmware/rtos_standin: NOT FreeRTOS, a scheduler of this
project's own with FreeRTOS's type, member and variable names), built here with arm-none-eabi-gcc
around the demo's workload and run on QEMU under gdb-multiarch. A real FreeRTOS firmware, built by
hand (docs/rtos.md), is read by the optional test at the end (ARENASCOPE_FREERTOS_ELF).

Expected values come from outside the plugin: stack bounds and TCB addresses from
arm-none-eabi-nm -S (the static stacks), the heap stack from the stand-in's ucHeap and its 8-byte
header; the bytes never used from a dump of each stack (GDB `dump binary memory`) counted here
word by word against 0xA5A5A5A5; the running task's SP from GDB's $sp (thread mode: the PSP).
"""
import json
import os
import re
import shutil
import subprocess

import pytest

from harness import ROOT, cortex_m_elf, gdb_batch, qemu

PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
SRC = ROOT / "tests" / "firmware" / "rtos_standin"
BUILD = os.environ.get("ARENASCOPE_BUILD_DIR", str(ROOT / "build"))
PLAN = os.path.join(BUILD, "demo_plan")
pytestmark = pytest.mark.skipif(not shutil.which("arm-none-eabi-gcc") or not shutil.which("qemu-system-arm") or
                                not os.path.exists(os.path.join(PLAN, "arenascope_plan.h")),
                                reason="arm-none-eabi-gcc, qemu-system-arm or the demo's plan (bash tools/build.sh) "
                                "missing")
MACHINES = {"cortex-m4": ("mps2-an386", "an386.ld"), "cortex-m33": ("mps2-an505", "an505.ld")}
WORDS = {"infer": 512, "comms": 256, "logger": 128, "idle": 64}
PRIORITY = {"infer": 2, "comms": 1, "logger": 1, "idle": 0}


def build(tmp, cpu):
    return cortex_m_elf(tmp / f"rtos_{cpu}.elf", cpu, SRC / MACHINES[cpu][1],
                        [SRC / "main.c", SRC / "startup.c", SRC / "standin_rtos.c",
                         ROOT / "examples" / "demo" / "workload.c", os.path.join(PLAN, "demo_model_data.c")],
                        ["-std=gnu99", f"-I{ROOT / 'examples' / 'demo'}", f"-I{PLAN}", f"-L{SRC}"])

def nm(elf):
    out = subprocess.run(["arm-none-eabi-nm", "-S", str(elf)], capture_output=True, text=True, check=True).stdout
    return {p[3]: (int(p[0], 16), int(p[1], 16)) for p in (line.split() for line in out.splitlines()) if len(p) == 4}


def stacks(syms):
    """{task: (low, high)} from the ELF: three static arrays, and the logger's from ucHeap + 8."""
    heap = syms["ucHeap"][0] + 8
    out = {t: (syms[f"{t}_stack"][0], syms[f"{t}_stack"][0] + 4 * WORDS[t]) for t in ("infer", "comms", "idle")}
    out["logger"] = (heap, heap + 4 * WORDS["logger"])
    return out


def never_used(path):
    """Bytes of 0xA5A5A5A5 words from the bottom of a stack dump."""
    data = open(path, "rb").read()
    n = 0
    while n + 4 <= len(data) and data[n:n + 4] == b"\xa5" * 4:
        n += 4
    return n


def run(elf, machine, tmp, before, commands):
    syms = nm(elf)
    dumps = [f"dump binary memory {tmp}/{t}.bin {lo:#x} {hi:#x}" for t, (lo, hi) in stacks(syms).items()]
    with qemu(elf, machine=machine) as (port, _uart):
        _d, text = gdb_batch(elf, ["set pagination off", "set confirm off"] + before + dumps +
                             ["printf \"=sp=%#x\\n\", $sp", f"source {PLUGIN}", "set arena colour off"] + commands,
                             remote_port=port, timeout=180)
    return syms, text


def rows(text):
    """{task: [state, prio, range, size, peak, never used, SP...]} from `arena stack`'s table."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[0] in WORDS and re.fullmatch(r"0x[0-9a-f]+-0x[0-9a-f]+", parts[3]):
            out[parts[0]] = parts[1:]
    return out


@pytest.mark.parametrize("cpu", MACHINES)
def test_arena_stack_lists_every_task(cpu, tmp_path):
    elf = build(tmp_path, cpu)
    # Stopped once the logger has suspended itself: how far the prio-1 tasks got by a given invoke
    # depends on how host time lands on QEMU's ticks (a loaded CI machine once stopped it earlier).
    syms, text = run(elf, MACHINES[cpu][0], tmp_path,
                     ["break rtos_checkpoint if logger_tcb.xStateListItem.pxContainer == &xSuspendedTaskList",
                      "continue"],
                     ["echo =stack=\\n", "arena stack", "echo =check=\\n", "arena check",
                      f"arena snapshot {tmp_path}/snap.json"])
    sp = int(re.search(r"=sp=(0x[0-9a-f]+)", text).group(1), 16)
    out = text.split("=stack=")[1].split("=check=")[0]
    tcb = syms["infer_tcb"][0]
    assert f"FreeRTOS: 4 tasks, running: 'infer' (pxCurrentTCB {tcb:#x})" in out, out
    table = rows(out)
    assert set(table) == set(WORDS), out
    for task, (lo, hi) in stacks(syms).items():
        row = table[task]
        assert row[1] == str(PRIORITY[task]) and row[2] == f"{lo:#x}-{hi:#x}" and row[3] == f"{hi - lo}" and \
            row[4] == "B", (task, row)
        unused = never_used(tmp_path / f"{task}.bin")
        assert unused < hi - lo
        assert row[7] == f"{unused}" and row[5] == f"{hi - lo - unused}", (task, row, unused)
    assert table["infer"][0] == "running" and table["logger"][0] == "suspended", out
    assert table["comms"][0] in ("ready", "blocked") and table["idle"][0] in ("ready", "running"), out
    assert table["infer"][9] == f"{sp:#x}" and table["infer"][10] == "(PSP)", out
    assert f"current SP:               {sp:#x} is on the stack of task 'infer' (the process stack, PSP)" in out
    guard = syms["stack_guard"]
    arena = syms["tensor_arena"]
    room = stacks(syms)["infer"][1] - (arena[0] + arena[1])
    assert (f"task 'infer': right above the arena at {arena[0]:#x}-{arena[0] + arena[1]:#x}, through the guard band "
            f"{guard[0]:#x}-{guard[0] + guard[1]:#x}: room to its end {room} B >=") in out, out
    check = text.split("=check=")[1]
    assert re.search(r"PASS\s+task-stack\s+task 'logger' \(stack 0x[0-9a-f]+-0x[0-9a-f]+\): peak \d+ B of 512 B", check)
    snap = json.load(open(tmp_path / "snap.json"))
    got = {t["name"]: t for t in snap["tasks"]["list"]}
    assert snap["tasks"]["kernel"] == "FreeRTOS" and snap["tasks"]["current_tcb"] == tcb
    assert got["infer"]["low_addr"] == stacks(syms)["infer"][0] and got["infer"]["arena_index"] == 0
    assert got["logger"]["high_source"].startswith("heap_4's block header")
    assert got["comms"]["high_source"].startswith("the ELF object comms_stack")


def test_a_task_stack_into_the_arena_gets_its_verdict(tmp_path):
    """Scenario 1 on the Cortex-M4: the inference task recurses through the guard band into the
    arena's tail; the next invoke faults on its stack (EXC_RETURN 0xFFFFFFFD: thread mode, PSP)."""
    elf = build(tmp_path, "cortex-m4")
    syms, text = run(elf, "mps2-an386", tmp_path,
                     ["break rtos_checkpoint", "continue", "set var demo_scenario = 1", "delete",
                      "break arenascope_fault_hook", "continue"],
                     ["echo =fault=\\n", "arena fault", "echo =check=\\n", "arena check",
                      f"arena snapshot {tmp_path}/snap.json"])
    out, check = text.split("=fault=")[1].split("=check=")
    lo, hi = stacks(syms)["infer"]
    assert (f"VERDICT: the stack of task 'infer' ran into the arena. Its 0xA5 fill is gone down to its pxStack {lo:#x} "
            "and the guard band below it is overwritten; the fault was taken on that task's stack.") in out, out
    assert "EXC_RETURN 0xfffffffd: returns to thread mode, frame on the process (PSP) stack" in out
    frame = int(re.search(r"stacked frame at (0x[0-9a-f]+)", out).group(1), 16)
    assert (f"SP at the fault {frame + 32:#x} was on the stack of task 'infer' {lo:#x}-{hi:#x}, {hi - frame - 32} B in "
            f"use (EXC_RETURN 0xfffffffd: the frame is on the process stack (PSP), which FreeRTOS gives the running "
            f"task (pxCurrentTCB {syms['infer_tcb'][0]:#x}))") in out, out
    assert re.search(r"FAIL\s+guard\s+guard band overwritten at 0x[0-9a-f]+-0x[0-9a-f]+ \(256 B\): the stack of task "
                     rf"'infer', whose 0xA5 fill is gone down to its pxStack {lo:#x}, ran through all of it", check)
    assert re.search(r"FAIL\s+task-stack\s+task 'infer' .* overflowed: its 0xA5 fill is gone down to pxStack", check)
    snap = json.load(open(tmp_path / "snap.json"))
    verdict = snap["fault"]["verdicts"][0]
    assert verdict["kind"] == "stack-into-arena" and "task 'infer'" in verdict["headline"]
    infer = next(t for t in snap["tasks"]["list"] if t["name"] == "infer")
    assert infer["overflowed"] and infer["peak_is_lower_bound"] and infer["peak_bytes"] == hi - syms["stack_guard"][0]


def test_psplim_stops_a_task_overflow_on_armv8m(tmp_path):
    """Scenario 1 on the Cortex-M33: the stand-in sets PSPLIM to the task's pxStack at each switch
    (as FreeRTOS's ARM_CM33 port does): UsageFault STKOF (CFSR bit 20, DDI 0553 D1.2.4) before any
    byte below pxStack is written, and no frame (the stacking stops at the limit)."""
    elf = build(tmp_path, "cortex-m33")
    syms, text = run(elf, "mps2-an505", tmp_path,
                     ["break rtos_checkpoint", "continue", "set var demo_scenario = 1", "delete",
                      "break arenascope_fault_hook", "continue"],
                     ["echo =fault=\\n", "arena fault", "echo =check=\\n", "arena check"])
    out, check = text.split("=fault=")[1].split("=check=")
    lo, hi = stacks(syms)["infer"]
    assert (f"VERDICT: the stack of task 'infer' ran out, and the stack limit register stopped it: PSPLIM, which the "
            f"scheduler sets to the running task's pxStack {lo:#x}, so the overflow wrote nothing below it") in out, out
    assert "CFSR.UFSR.STKOF (bit 20)" in out and "EXC_RETURN 0xfffffffd" in out
    assert "the fault was taken on the stack of task 'infer'" in out
    assert re.search(r"FAIL\s+task-stack\s+task 'infer' .* PSPLIM stopped it at pxStack \(UsageFault STKOF\), so "
                     "nothing below was written", check), check
    assert re.search(r"PASS\s+guard\s+guard band intact", check), check


@pytest.mark.skipif(not os.environ.get("ARENASCOPE_FREERTOS_ELF"),
                    reason="ARENASCOPE_FREERTOS_ELF (a real FreeRTOS firmware for mps2-an386, docs/rtos.md) not set")
def test_a_real_freertos_firmware(tmp_path):
    """A real FreeRTOS-Kernel firmware built by hand (docs/rtos.md, "Checked on real FreeRTOS"):
    every task FreeRTOS created is listed, with the bytes never used that FreeRTOS's own
    uxTaskGetStackHighWaterMark reported into g_hwm_words[] at the breakpoint."""
    elf = os.environ["ARENASCOPE_FREERTOS_ELF"]
    with qemu(elf, machine="mps2-an386") as (port, _uart):
        _d, text = gdb_batch(elf, ["set pagination off", "set confirm off", "break rtos_checkpoint", "continue",
                                   "printf \"=n=%d\\n\", uxCurrentNumberOfTasks",
                                   "printf \"=hwm=%d %d %d\\n\", g_hwm_words[0], g_hwm_words[1], g_hwm_words[2]",
                                   f"source {PLUGIN}", "set arena colour off", "arena stack",
                                   f"arena snapshot {tmp_path}/snap.json"], remote_port=port, timeout=180)
    n = int(re.search(r"=n=(\d+)", text).group(1))
    hwm = [int(x) for x in re.search(r"=hwm=(\d+) (\d+) (\d+)", text).group(1, 2, 3)]
    assert f"FreeRTOS: {n} tasks" in text, text
    got = {t["name"]: t for t in json.load(open(tmp_path / "snap.json"))["tasks"]["list"]}
    assert len(got) == n, got
    for name, words in zip(("infer", "comms", "logger"), hwm, strict=True):
        assert got[name]["never_used_bytes"] == 4 * words, (name, got[name], words)
