"""An arena and an interpreter in external RAM, on REAL TFLM 90b983c2 firmware (optional; issue 35,
items 1, 2 and 5).

Built by hand outside the project (docs/integrating-tflm.md, "External RAM", gives the recipe) for
QEMU mps2-an386, whose PSRAM bank (16 MiB at 0x21000000) no ELF section covers, as esp-tflite-micro's
heap_caps_malloc(MALLOC_CAP_SPIRAM) gives memory: the interpreter placed at 0x21000000 with
placement new, the arena at 0x21001000, the interpreter held by a typed global pointer
(`tflite::MicroInterpreter* g_interpreter`) and a member of a user struct (`g_app.interpreter`):

  ARENASCOPE_TFLM_EXT_HEALTHY_ELF     1184 B arena; inference_done
  ARENASCOPE_TFLM_EXT_UNDERSIZED_ELF  1004 B arena (minimum 1068); allocation_failed
  ARENASCOPE_TFLM_EXT_NOG_ELF         the healthy one linked to TFLM built without -g

Each test skips cleanly without its variable. The addresses are the application's own (it places
the objects there), checked by hand with GDB's `p g_interpreter` and `p *g_interpreter`."""
import pytest

from harness import plugin_at_stops, real_elf

NAMED = "set arena memory psram 0x21000000 0x22000000"


def elf_of(name):
    return real_elf(f"ARENASCOPE_TFLM_EXT_{name}_ELF", "external-RAM TFLM firmware")


@pytest.mark.parametrize("setup,memory", [([], "memory the ELF does not describe (0x21000000-0x210014a0, holding "
                                               "the interpreter g_interpreter points to; name it with `set arena "
                                               "memory NAME START END`)"),
                                          ([NAMED], "psram (named by the user)")])
def test_the_interpreter_is_found_through_its_pointer_and_the_arena_named_in_its_memory(setup, memory):
    commands = [*setup, "arena interpreters", "arena info", "arena check", "arena fault", "arena whereis 0x21001010"]
    text = plugin_at_stops(elf_of("HEALTHY"), ["inference_done"], commands)
    assert "[0] 0x21000000 (the pointer g_interpreter) one arena: arena 0x21001000+1184; allocated" in text, text
    assert "bounds:                 0x21001000-0x210014a0, size 1184 B" in text and "used:                   676 B" \
        in text, text
    assert f"lies in {memory}" in text and "arena check: PASS" in text, text
    assert f"the arena is in {memory}, apart from the stack's memory" in text, text
    assert "overwritten" not in text and "no memory of the ELF" not in text, text


def test_an_undersized_arena_in_external_ram_gets_the_failure_and_its_shortfall():
    text = plugin_at_stops(elf_of("UNDERSIZED"), ["allocation_failed"], [NAMED, "arena fault"])
    assert "VERDICT: AllocateTensors did not finish: it returned kTfLiteError" in text, text
    assert 'TFLM prints "Too many buffers (max is 2)"' in text and "needs 1068 B with these kernels: 64 B short" \
        in text, text


def test_external_ram_with_tflm_built_without_g():
    text = plugin_at_stops(elf_of("NOG"), ["inference_done"], [NAMED, "arena info", "arena check"])
    assert "layout: arenascope's layout of TFLM 2026-08 measured on 90b983c2" in text, text
    assert "bounds:                 0x21001000-0x210014a0, size 1184 B" in text, text
    assert "lies in psram (named by the user)" in text and "arena check: PASS" in text, text
