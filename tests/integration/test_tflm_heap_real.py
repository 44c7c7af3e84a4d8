"""Arenas where the field puts them, on REAL TFLM 90b983c2 firmware (optional; issue 35).

Built by hand outside the project (docs/integrating-tflm.md, "Heap arenas and interpreters made
with new", gives the recipe) for QEMU mps2-an386, the hello_world int8 model, the arena malloc'd
from newlib's heap (`end` .. `__HeapLimit`), named by:

  ARENASCOPE_TFLM_HEAP_HEALTHY_ELF        a function-static interpreter, a 1184 B heap arena; inference_done
  ARENASCOPE_TFLM_HEAP_NEW_ELF            the interpreter made with `new` too; inference_done
  ARENASCOPE_TFLM_HEAP_UNDERSIZED_ELF     a 1004 B heap arena (minimum 1068 - 64): allocation_failed
  ARENASCOPE_TFLM_HEAP_PER_INFERENCE_ELF  interpreter and arena built, invoked and freed each inference:
                                          inference_done, then between_inferences after the frees
  ARENASCOPE_TFLM_HEAP_STACK_ELF          the heap arena right below the stack, which a recursion runs into

Each test skips cleanly without its variable. The expected figures were measured by hand with GDB's
`p` on TFLM's own members and newlib's free list (no inferior calls), never by the plugin."""
import re

import pytest

from harness import plugin_at_stops, real_elf


def elf_of(name):
    return real_elf(f"ARENASCOPE_TFLM_HEAP_{name}_ELF", "heap-arena TFLM firmware")


@pytest.mark.parametrize("name,base,how", [("HEALTHY", 0x200002A0, "a scan for the MicroInterpreterGraph vtable"),
                                           ("NEW", 0x200001D0, "the pointer g_interpreter")])
def test_a_heap_arena_is_tflms_own_with_no_false_damage(name, base, how):
    text = plugin_at_stops(elf_of(name), ["inference_done"], ["arena info", "arena check", "arena fault"])
    assert f"({how})" in text, text
    assert f"bounds:                 {base:#x}-{base + 1184:#x}, size 1184 B" in text, text
    assert "used:                   676 B" in text, text
    assert "arena check: PASS" in text and "lies in the heap (end/__HeapLimit)" in text, text
    assert "overwritten" not in text and "points into no memory" not in text, text


def test_an_undersized_heap_arena_gets_the_failure_and_its_shortfall():
    text = plugin_at_stops(elf_of("UNDERSIZED"), ["allocation_failed"], ["arena fault"])
    assert "VERDICT: AllocateTensors did not finish: it returned kTfLiteError" in text, text
    assert "Too many buffers (max is 2)" in text and "needs 1068 B with these kernels: 64 B short" in text, text


def test_a_per_inference_interpreter_is_read_alive_and_called_freed_between_inferences():
    text = plugin_at_stops(elf_of("PER_INFERENCE"), ["inference_done", "between_inferences"], ["arena info"])
    assert "bounds:                 0x200001d0-0x20000670, size 1184 B" in text, text
    assert ("the MicroInterpreter at 0x20000688 is in freed heap memory (the C library's free list, "
            "__malloc_free_list, holds 0x200001c8-0x20000758): no interpreter is alive now") in text, text
    assert "overwritten" not in text, text


def test_the_stack_run_into_a_heap_arena():
    text = plugin_at_stops(elf_of("STACK"), ["HardFault_Handler"], ["arena fault", "print $arena_stack_room()"])
    assert "VERDICT: the stack ran into the arena: 352 B past its limit, 336 B into the arena" in text, text
    assert re.search(r"overwritten: SingleArenaBufferAllocator at 0x203fdfcc ", text), text
    assert re.search(r"^\$1 = -336$", text, re.M), text   # the arena ends 16 B below the limit
