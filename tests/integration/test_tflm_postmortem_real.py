"""The agentless post-mortem on REAL TFLM firmware in broken states (optional: CI has no TFLM).

Build the applications by hand, outside the project (docs/integrating-tflm.md, "Real TFLM in
broken states", gives the recipe and what each state does on QEMU mps2-an386), and name them:

  ARENASCOPE_TFLM_STACK_ELF       the stack runs through its limit into the tail; stops in HardFault_Handler
                                  (ARENASCOPE_TFLM_STACK_DEEPEST_SP: its deepest SP, measured in GDB)
  ARENASCOPE_TFLM_UNDERSIZED_ELF  AllocateTensors returns kTfLiteError, the app calls allocation_failed()
  ARENASCOPE_TFLM_IGNORED_ELF     the app ignores it and writes through input(0): HardFault in main
  ARENASCOPE_TFLM_HANG_ELF        a failed OpData allocation: TFLITE_DCHECK, AbortImpl loops
  ARENASCOPE_TFLM_CRASH_ELF       GreedyMemoryPlanner faults on a wrapped free space: HardFault
  ARENASCOPE_TFLM_BROKEN_MODEL    the model they run, its entry in ../shared/tflm-figures (default
                                  tflm_hello_world_int8.tflite; ARENASCOPE_TFLM_CRASH_MODEL for the crash
                                  ELF, default tflm_keyword_scrambled_8bit.tflite)

Each test skips cleanly without its variable. Expected figures: the arena's size is the ELF's
`tensor_arena` object, the minimum arena is real TFLM's bisected min_arena_bytes
(../shared/tflm-figures), never the plugin's."""
import json
import os
import pathlib
import re

import pytest

from harness import PLANNER, ROOT, TFLM_FIGURES, elf_symbols, gdb_batch, qemu

BAD = re.compile(r"cannot read|Cannot access memory|Traceback|Python Exception|internal error", re.I)
COMMANDS = ["info", "check", "fault", "map", "regions", "stack"]


def env_elf(name):
    path = os.environ.get(name)
    return pathlib.Path(path) if path and pathlib.Path(path).exists() else None


def minimum(model):
    if not TFLM_FIGURES.exists():
        pytest.skip("../shared/tflm-figures is not beside the clone")
    return json.loads(TFLM_FIGURES.read_text())["models"][model]["arm_m4"]["min_arena_bytes"]


def arena_size(elf):
    from elftools.elf.elffile import ELFFile  # pylint: disable=import-outside-toplevel
    with open(elf, "rb") as f:
        sym = ELFFile(f).get_section_by_name(".symtab").get_symbol_by_name("tensor_arena")[0]
        return sym["st_value"], sym["st_size"]


def run(elf, stops):
    """Every arena command's output at the first of the `stops` breakpoints hit."""
    steps = [f"source {ROOT / 'gdbplugin' / 'arenascope.py'}", f"set arena planner-path {PLANNER}",
             "set arena colour off", *[f"break {s}" for s in stops], "continue"]
    steps += [f"arena {c}" for c in COMMANDS]
    with qemu(elf, semihosting=True) as (port, _):
        _, text = gdb_batch(elf, steps, remote_port=port, timeout=120)
    assert not BAD.search(text), text
    return text


def case(name):
    elf = env_elf(name)
    return pytest.mark.skipif(elf is None, reason=f"{name} names no TFLM firmware (optional test)")


MODEL = os.environ.get("ARENASCOPE_TFLM_BROKEN_MODEL", "tflm_hello_world_int8.tflite")


@case("ARENASCOPE_TFLM_STACK_ELF")
def test_stack_into_the_tail_of_real_tflm():
    elf = env_elf("ARENASCOPE_TFLM_STACK_ELF")
    base, size = arena_size(elf)
    syms = elf_symbols(elf)
    text = run(elf, ["HardFault_Handler"])
    gap = syms["__StackLimit"] - (base + size)
    assert 0 <= gap <= 1024  # the arena right below the stack (or a gap below it), as built
    # How far: N B past the limit, N - gap into the arena (the deepest frame's SP; an optional
    # ARENASCOPE_TFLM_STACK_DEEPEST_SP, measured in GDB at the deepest recursion, pins it).
    m = re.search(r"VERDICT: the stack ran into the arena: (\d+) B past its limit, (\d+) B into the arena, down "
                  r"into (\S+)", text)
    assert m and int(m.group(1)) - gap == int(m.group(2)), text
    deepest = os.environ.get("ARENASCOPE_TFLM_STACK_DEEPEST_SP")
    if deepest:
        assert int(m.group(1)) == syms["__StackLimit"] - int(deepest, 0), (m.group(0), deepest)
    # TFLM's allocator objects sit at the arena's top, first in the stack's way: named, top down.
    names = re.findall(r"overwritten: (\S+) at (0x[0-9a-f]+)", text)
    assert [n for n, _ in names[:3]] == ["SingleArenaBufferAllocator", "GreedyMemoryPlanner", "MicroAllocator"], text
    assert int(names[0][1], 16) > int(names[1][1], 16) > int(names[2][1], 16) >= base
    # The faulting load is tied to a word the stack left in an overwritten object, through the
    # stacked register that held the object's address: SubgraphAllocations' node_and_registrations
    # followed to NodeAndRegistration.registration at +28 (after the 28 B TfLiteNode on a
    # Cortex-M4, TFLM-INTERNALS.md "Measured layouts") when the stack reached it, else the
    # MicroAllocator's vtable pointer it called through.
    assert re.search(r"the faulting address \(BFAR\) 0x[0-9a-f]+ is (0x[0-9a-f]+ \+ \d+|that word): stacked r\d+ "
                     r"0x[0-9a-f]+ points into (SubgraphAllocations\[1\]|MicroAllocator)", text) or \
        re.search(r"the faulting address \(BFAR\) (0x[0-9a-f]+) is stacked (r\d+) (0x[0-9a-f]+) \+ (\d+): \2 held \3, "
                  r"the word the stack left at 0x[0-9a-f]+ in (SubgraphAllocations\[1\]|MicroAllocator)", text), text
    assert "TFLM state: smashed" in text


def undersized(name, stops):
    """(arena size, real TFLM's minimum for the model, every command's output) of the ELF `name`."""
    elf = env_elf(name)
    return arena_size(elf)[1], minimum(MODEL), run(elf, stops)


@case("ARENASCOPE_TFLM_UNDERSIZED_ELF")
def test_allocate_tensors_failed_on_real_tflm():
    size, need, text = undersized("ARENASCOPE_TFLM_UNDERSIZED_ELF", ["allocation_failed"])
    assert "VERDICT: AllocateTensors did not finish: it returned kTfLiteError" in text, text
    assert f"The arena is {size} B and this model needs {need} B with these kernels: {need - size} B short" in text
    assert "the target's allocator is frozen exactly where the replay stops" in text, text
    assert "FAIL  tflm" in text


@case("ARENASCOPE_TFLM_IGNORED_ELF")
def test_ignored_failure_on_real_tflm():
    size, need, text = undersized("ARENASCOPE_TFLM_IGNORED_ELF", ["HardFault_Handler", "invoke_failed"])
    assert "VERDICT: AllocateTensors failed and the application went on as if it had succeeded" in text, text
    assert f"{need - size} B short" in text


@case("ARENASCOPE_TFLM_HANG_ELF")
def test_hang_in_abort_on_real_tflm():
    elf = env_elf("ARENASCOPE_TFLM_HANG_ELF")
    text = run(elf, ["AbortImpl"])
    assert "VERDICT: AllocateTensors did not finish: TFLM hangs inside it, reacting to a too-small arena" in text, text
    assert "the core is stuck at" in text and "in AbortImpl" in text
    assert "continuing will not get past it" in text


@case("ARENASCOPE_TFLM_CRASH_ELF")
def test_crash_inside_tflm_on_real_tflm():
    elf = env_elf("ARENASCOPE_TFLM_CRASH_ELF")
    _, size = arena_size(elf)
    need = minimum(os.environ.get("ARENASCOPE_TFLM_CRASH_MODEL", "tflm_keyword_scrambled_8bit.tflite"))
    text = run(elf, ["HardFault_Handler"])
    verdict = "VERDICT: AllocateTensors did not finish: TFLM crashed inside it, reacting to a too-small arena"
    assert verdict in text, text
    assert "GreedyMemoryPlanner" in text and f"{need - size} B short" in text
