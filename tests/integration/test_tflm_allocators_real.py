"""Two models in one arena, and the two-arena constructor, on REAL TFLM 90b983c2 firmware
(optional; issue 35, item 2).

Built by hand outside the project (docs/integrating-tflm.md, "Several models in one arena" and
"Checked on real TFLM" give the recipe; `app-nog/shared.cc`) for QEMU mps2-an386 with the -g
library and the reference kernels of hello_world int8 and keyword_scrambled int8:

  ARENASCOPE_TFLM_SHARED_ELF           MicroAllocator::Create(tensor_arena, 12000) once, then
                                       `static MicroInterpreter kws(...)` and `hello(...)` given that
                                       allocator (TFLM's advice for two models); inference_done
  ARENASCOPE_TFLM_TWO_ARENA_ELF        MicroAllocator::Create(persistent_arena, 1024,
                                       non_persistent_arena, 1024), hello_world; inference_done
  ARENASCOPE_TFLM_TWO_ARENA_SMALL_ELF  the same with a 512 B non-persistent buffer: "Too many buffers
                                       (max is 2)"; allocation_failed

A two-arena-only firmware links no SingleArenaBufferAllocator, so its DWARF does not describe it:
that class comes from the measured layout. The expected figures were read by hand with GDB's `p`
on TFLM's own members (kws.allocator_ == hello.allocator_ == 0x2000325c; the two-arena
allocators' tail_temp_ at persistent_arena+364, head_temp_ at non_persistent_arena+32)."""
from harness import plugin_at_stops, real_elf


def elf_of(name):
    return real_elf(f"ARENASCOPE_TFLM_{name}_ELF", "such TFLM firmware")


def test_two_models_in_one_arena_are_shown_sharing_it_with_each_ones_objects_named():
    text = plugin_at_stops(elf_of("SHARED"), ["inference_done"], ["arena interpreters", "arena regions"])
    assert "[0] 0x2000017c 'main::kws' (a scan for the MicroInterpreterGraph vtable) one arena: arena " \
           "0x200003f0+12000; allocated" in text, text
    assert "[1] 0x20000250 'main::hello' (a scan for the MicroInterpreterGraph vtable) shares its MicroAllocator " \
           "and arena with [0]: one arena: arena 0x200003f0+12000; allocated" in text, text
    assert "this arena is shared through one MicroAllocator with 1 other interpreter(s) ('main::hello')" in text, text
    assert "'main::hello': input tensor 0: TfLiteTensor" in text and "'main::hello': subgraph 0 operator 0 " \
           "(FULLY_CONNECTED): OpDataFullyConnected" in text, text
    assert "subgraph 0 operator 1 (SVDF): OpDataSvdf" in text, text  # kws's own, unprefixed
    assert "TFLM's persistent tail is" not in text, text  # no false replay mismatch


def test_the_two_arena_constructor_gives_both_buffers():
    text = plugin_at_stops(elf_of("TWO_ARENA"), ["inference_done"], ["arena interpreters", "arena info",
                                                                      "arena check"])
    assert "two arenas: non-persistent 0x20000310+1024, persistent 0x20000710+1024; allocated" in text, text
    assert "does not describe SingleArenaBufferAllocator" in text, text
    assert "tail (persistent):      660 B, +364..+1024" in text and "head (planned):         32 B" in text, text
    assert "arena check: PASS" in text, text


def test_a_too_small_non_persistent_buffer_is_an_unfinished_allocate_tensors():
    text = plugin_at_stops(elf_of("TWO_ARENA_SMALL"), ["allocation_failed"], ["arena fault"])
    assert "VERDICT: AllocateTensors did not finish: it returned kTfLiteError" in text, text
    assert 'planning ran out of room ("Too many buffers")' in text, text
