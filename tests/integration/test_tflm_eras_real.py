"""Every TFLM era on REAL TFLM firmware (optional: CI has no TFLM; issue 34).

Real TFLM at one commit of each older layout era (decode/tflm_profile.py), built by hand outside
the project for QEMU mps2-an386 (docs/integrating-tflm.md, "Every TFLM era", gives the recipe),
running the hello_world int8 model (FULLY_CONNECTED only, reference kernels), each in three states:

  ARENASCOPE_TFLM_<ERA>_HEALTHY_ELF     arena = minimum + 10 % (rounded up to 16), stops in inference_done
  ARENASCOPE_TFLM_<ERA>_UNDERSIZED_ELF  arena = minimum - 64 B: AllocateTensors returns kTfLiteError,
                                        the app calls allocation_failed()
  ARENASCOPE_TFLM_<ERA>_STACK_ELF       the arena right below the stack, which a recursion runs into:
                                        HardFault_Handler

ERA is 2023_02 (upstream 58aa9833f), 2022_09 (59b39f6cb), 2022_07 (547f8aeab) or 2022_03 (5b3670d82). Each test skips
cleanly without its variable. Expected figures are what real TFLM reported on QEMU, measured by
hand with GDB's `p` on TFLM's own members (no inferior calls) and by bisecting the arena size
(docs/integrating-tflm.md records them), never the plugin's or the planner's."""
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import pytest

from harness import PLANNER, ROOT, plugin_at_stops, real_elf

# Measured on real TFLM (docs/integrating-tflm.md, "Every TFLM era"): how far below the stack's
# limit the stack ELF's recursion went (its deepest SP, read in GDB at the deepest call), the
# era's id, arena sizes,
# arena_used_bytes() = head + tail after AllocateTensors, the smallest arena AllocateTensors
# succeeds in, and the arena allocator's class and where TFLM's objects sit below the arena's
# end E (`p &...` on each).
ERAS = {
    "2023_02": dict(past=296, id="2023-02", healthy=1168, undersized=988, head=32, tail=628, minimum=1052,
                    arena_allocator="SingleArenaBufferAllocator", objects={36: 36, 80: 44, 116: 36}),
    "2022_09": dict(past=288, id="2022-09", healthy=1136, undersized=960, head=32, tail=596, minimum=1024,
                    arena_allocator="SingleArenaBufferAllocator", objects={40: 40, 84: 44, 124: 40}),
    "2022_07": dict(past=288, id="2022-07", healthy=1136, undersized=960, head=32, tail=596, minimum=1024,
                    arena_allocator="SimpleMemoryAllocator", objects={40: 40, 84: 44, 124: 40}),
    "2022_03": dict(past=296, id="2022-03", healthy=1120, undersized=952, head=32, tail=596, minimum=1016,
                    arena_allocator="SimpleMemoryAllocator", objects={36: 36, 80: 44, 116: 36}),
}
OBJECT_NAMES = ("{arena_allocator}", "GreedyMemoryPlanner", "MicroAllocator")


def elf_of(era, state):
    return real_elf(f"ARENASCOPE_TFLM_{era}_{state}_ELF", "real TFLM firmware")


@pytest.mark.parametrize("era", sorted(ERAS))
def test_healthy_real_tflm_of_each_era_is_mapped_as_tflm_laid_it_out(era):
    m = ERAS[era]
    elf = elf_of(era, "HEALTHY")
    with tempfile.TemporaryDirectory() as tmp:
        text = plugin_at_stops(elf, ["inference_done"], ["arena info", "arena interpreters", "arena version",
                                           f"arena snapshot {tmp}/s.json"])
        snap = json.loads(pathlib.Path(tmp, "s.json").read_text())
    assert f"TFLM {m['id']} layout" in text, text
    assert re.search(rf"arena interpreters: 1 found; .*; TFLM {m['id']} layout", text), text
    assert f"  this firmware:    TFLM {m['id']} layout" in text, text
    assert snap["tflm"]["layout"]["id"] == m["id"] and snap["tflm"]["condition"] == "allocated"
    a = snap["arenas"][0]
    assert a["size_bytes"] == m["healthy"]
    assert a["used_bytes"] == m["head"] + m["tail"] and a["head_bytes"] == m["head"], a
    assert a["size_bytes"] - a["tail_offset"] == m["tail"], a
    # TFLM's allocator objects, each named by its class in this era, where TFLM put them
    names = [n.format(**m) for n in OBJECT_NAMES]
    for (below_end, size), name in zip(m["objects"].items(), names, strict=True):
        found = [r for r in a["regions"] if r["name"] == name]
        assert [(a["size_bytes"] - r["offset"], r["size_bytes"]) for r in found] == [(below_end, size)], (name, a)
    # the planner replays this era (--tflm): its minimum holds, so the headroom is against it
    assert a["minimum_arena_bytes"] == m["minimum"], a


@pytest.mark.parametrize("era", sorted(ERAS))
def test_undersized_real_tflm_of_each_era_gets_the_failure_and_its_shortfall(era):
    m = ERAS[era]
    text = plugin_at_stops(elf_of(era, "UNDERSIZED"), ["allocation_failed"], ["arena fault", "arena info"])
    assert "VERDICT: AllocateTensors did not finish: it returned kTfLiteError" in text, text
    assert "Too many buffers (max is 2)" in text, text
    assert f"this model needs {m['minimum']} B with these kernels: {m['minimum'] - m['undersized']} B short" in text, \
        text
    assert "is not where the replay stops" not in text, text


@pytest.mark.parametrize("era", sorted(ERAS))
def test_the_stack_run_into_the_tail_of_each_era_names_the_overwritten_objects(era):
    """Live in GDB, and from a RAM dump of the same stop with the standalone tool (its DWARF
    reader, not GDB's: TFLM before 2022-10 declares some types as typedefs in namespace tflite)."""
    m = ERAS[era]
    elf = elf_of(era, "STACK")
    with tempfile.TemporaryDirectory() as tmp:
        text = plugin_at_stops(elf, ["HardFault_Handler"], [
            "arena fault", "arena check", "print $arena_stack_room()",
            f"dump binary memory {tmp}/lo.bin 0x20000000 0x20001000",
            f"dump binary memory {tmp}/hi.bin 0x203fc000 0x20400000",
            f"python open('{tmp}/regs.txt', 'w').write(gdb.execute('info registers', to_string=True))"])
        tool = subprocess.run([str(ROOT / "gdbplugin" / "arenascope"), "fault", "--elf", str(elf), "--planner",
                               str(PLANNER), "--ram", f"{tmp}/lo.bin@0x20000000", "--ram", f"{tmp}/hi.bin@0x203fc000",
                               "--registers", f"{tmp}/regs.txt"], capture_output=True, text=True, timeout=300)
    for out in (text, tool.stdout + tool.stderr):
        assert "VERDICT: the stack ran into the arena" in out, out
        for name in (n.format(**m) for n in OBJECT_NAMES):
            assert re.search(rf"overwritten: {name} at 0x[0-9a-f]+ ", out), (name, out)
        assert "Link the agent" not in out and "with -g" not in out, out
    # the stack's figures count how far it went, not the paint left at its limit
    assert re.search(rf"^\$1 = -{m['past']}$", text, re.M), text
    assert f"FAIL  stack      the stack ran {m['past']} B past its limit" in text, text


def test_a_planner_replaying_another_tflm_is_not_taken_for_facts(tmp_path):
    """A planner that ignores --tflm (it replays today's TFLM) on real TFLM 5b3670d82 firmware: the
    healthy map leaves the kernels' data unnamed and gives no minimum; the failed AllocateTensors
    gives no shortfall; the smashed tail's figures are unknown. Each says why."""
    wrapper = tmp_path / "plan"
    wrapper.write_text(f"#!{sys.executable}\nimport os, sys\nargs = sys.argv[1:]\n"
                       "while '--tflm' in args:\n    i = args.index('--tflm')\n    del args[i:i + 2]\n"
                       f"os.execv({str(PLANNER)!r}, [{str(PLANNER)!r}, *args])\n")
    wrapper.chmod(0o755)
    text = plugin_at_stops(elf_of("2022_03", "HEALTHY"), ["inference_done"], ["arena info", "arena regions"],
                           planner_path=wrapper)
    assert "TFLM's persistent tail is 596 B, the planner's replay of TFLM 2026-08 for this model gives 644 B" in text
    assert "OpDataFullyConnected" not in text and "(the planner's minimum arena" not in text, text
    for state, stop, said in (("UNDERSIZED", "allocation_failed", "no shortfall is given"),
                              ("STACK", "HardFault_Handler", "tail (persistent):      unknown")):
        text = plugin_at_stops(elf_of("2022_03", state), [stop], ["arena fault", "arena info"], planner_path=wrapper)
        assert "the planner's replay of this model is not what this firmware's TFLM did" in text, text
        assert said in text, text
