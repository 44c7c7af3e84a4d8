"""TFLM linked as a library built without -g, on REAL TFLM 90b983c2 firmware (optional; issue 35,
item 4).

Built by hand outside the project (docs/integrating-tflm.md, "TFLM without debug information",
gives the recipe): the library with the flags of the -g one minus -g, the application with -g,
for QEMU mps2-an386 and the hello_world int8 model. The application's DWARF then describes the
MicroInterpreter but only declares MicroAllocator, SingleArenaBufferAllocator, the graph and the
planner, as with NXP's or Infineon's prebuilt libtflm.a. Named by:

  ARENASCOPE_TFLM_NOG_HEALTHY_ELF     a static 1184 B arena, a file-scope interpreter; done
  ARENASCOPE_TFLM_NOG_WITH_G_ELF      the same application linked to the -g library (the parity check)
  ARENASCOPE_TFLM_NOG_UNDERSIZED_ELF  a 1064 B arena (minimum 1068): allocation_failed
  ARENASCOPE_TFLM_NOG_STACK_ELF       the arena right below the stack, which a recursion runs into
  ARENASCOPE_TFLM_NOG_HEAP_NEW_ELF    the interpreter made with `new`, the arena malloc'd; inference_done

Each test skips cleanly without its variable. The expected addresses were read by hand with GDB's
`p` on the -g build's TFLM members (allocator_ at 0x200006ac, its non_persistent_buffer_allocator_
at 0x200006fc, memory_planner_ at 0x200006d0), never by the plugin."""
from harness import plugin_at_stops, real_elf

MEASURED = "layout: arenascope's layout of TFLM 2026-08 measured on 90b983c2"


def elf_of(name):
    return real_elf(f"ARENASCOPE_TFLM_NOG_{name}_ELF", "TFLM-without-debug-information firmware")


def test_a_healthy_firmware_gets_tflms_own_figures_and_the_same_map_as_with_g():
    commands = ["arena info", "arena regions", "arena check", "arena fault"]
    text = plugin_at_stops(elf_of("HEALTHY"), ["done"], commands)
    assert MEASURED in text and "does not describe MicroInterpreterGraph, MicroAllocator" in text, text
    assert "bounds:                 0x20000280-0x20000720, size 1184 B" in text, text
    assert "used:                   676 B" in text and "peak:                   1068 B" in text, text
    for addr, what in ((0x200006AC, "MicroAllocator"), (0x200006FC, "SingleArenaBufferAllocator"),
                       (0x200006D0, "GreedyMemoryPlanner")):
        assert f"{addr:#x}" in text and what in text, (what, text)
    assert "arena check: PASS" in text and "overwritten" not in text, text
    with_g = plugin_at_stops(elf_of("WITH_G"), ["done"], ["arena regions"])

    def table(t):
        return t[t.index("arena regions"):].split("Kill the program")[0] if "arena regions" in t else t
    regions = [line for line in text.splitlines() if line.lstrip()[:1].isdigit() and " B " in line]
    assert regions and all(line in with_g for line in regions), (table(text), table(with_g))


def test_an_undersized_arena_gets_the_failure_and_its_shortfall():
    text = plugin_at_stops(elf_of("UNDERSIZED"), ["allocation_failed"], ["arena fault"])
    assert "VERDICT: AllocateTensors did not finish: it returned kTfLiteError" in text, text
    assert 'TFLM prints "Too many buffers (max is 3)"' in text and "needs 1068 B with these kernels: 4 B short" \
        in text, text


def test_the_stack_run_into_the_arena():
    text = plugin_at_stops(elf_of("STACK"), ["HardFault_Handler"], ["arena fault"])
    assert "VERDICT: the stack ran into the arena: 372 B past its limit, 116 B into the arena" in text, text
    assert "overwritten: MicroAllocator at 0x203fde88 (36 B)" in text, text
    assert "its object, such as a prebuilt library, was built without -g" in text, text


def test_an_interpreter_made_with_new_in_the_heap():
    text = plugin_at_stops(elf_of("HEAP_NEW"), ["inference_done"], ["arena info", "arena check"])
    assert MEASURED in text and "(the pointer g_interpreter)" in text, text
    assert "bounds:                 0x200001d0-0x20000670, size 1184 B" in text, text
    assert "arena check: PASS" in text and "overwritten" not in text, text
