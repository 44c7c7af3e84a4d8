"""REAL TFLM 90b983c2 built for RV32 (rv32imac, picolibc) on `qemu-system-riscv32 -M virt`
(optional; issue 36). Built by hand outside the project (docs/integrating-tflm.md, "RISC-V and
Xtensa: the arena's ABI"); named by:

  ARENASCOPE_TFLM_RV32_HEALTHY_KWS_ELF    keyword_scrambled_8bit, a 16384 B static arena; done
  ARENASCOPE_TFLM_RV32_UNDERSIZED_ELF     the same model in a 4096 B arena; allocation_failed
  ARENASCOPE_TFLM_RV32_STORE_FAULT_ELF    a healthy inference, then a store to 0xffffffc0; trap_handler
  ARENASCOPE_TFLM_RV32_STACK_ARENA_ELF    hello_world's 1600 B arena ending at __stack_limit, a
                                          recursion 112 B into it, then Invoke; trap_handler

Each test skips cleanly without its variable. The expected figures are what the real firmware
printed (arena_used_bytes 8140 = head 672 + tail 7468; "Failed to allocate temp memory. Requested:
1632, available 1580, missing: 52") and what GDB's `info registers` showed at the trap (mcause 7,
mtval 0xffffffc0; mcause 5, mtval 0xa5000000 for the stack run into MicroAllocator's
non_persistent_buffer_allocator_ at 0x80ffdf90), never the plugin's own output."""
from harness import RV32_VIRT, plugin_at_stops, real_elf


def elf_of(name):
    return real_elf(f"ARENASCOPE_TFLM_RV32_{name}_ELF", "real TFLM firmware for RV32")


def test_a_healthy_rv32_arena_is_mapped_with_tflms_figures():
    text = plugin_at_stops(elf_of("HEALTHY_KWS"), ["done"], ["arena info", "arena check", "arena fault"], **RV32_VIRT)
    assert "used:                   8140 B" in text, text
    assert "no fault" in text and "Traceback" not in text, text


def test_an_undersized_rv32_arena_quotes_the_rv32_figures():
    text = plugin_at_stops(elf_of("UNDERSIZED"), ["allocation_failed"], ["arena fault"], **RV32_VIRT)
    assert "VERDICT: AllocateTensors did not finish" in text, text
    assert "Requested: 1632, available 1580, missing: 52" in text, text
    assert "10468 B" in text and "10400 B" not in text, text


def test_a_store_fault_on_rv32_is_decoded():
    text = plugin_at_stops(elf_of("STORE_FAULT"), ["trap_handler"], ["arena fault"], **RV32_VIRT)
    assert "store/AMO access fault: from core registers (halted in the trap handler, mtvec)" in text, text
    assert "mtval 0xffffffc0: the faulting address" in text, text


def test_the_stack_run_into_the_rv32_arena():
    """The deepest SP GDB measured at the recursion's last frame was 0x80ffdf90, __stack_limit
    (0x80ffe000, the arena's end) - 112 B; the fault is the load through MicroAllocator's
    non_persistent_buffer_allocator_ (at 0x80ffdf90), which the stack overwrote with 0xa5000000."""
    text = plugin_at_stops(elf_of("STACK_ARENA"), ["trap_handler"], ["arena fault", "arena stack", "arena map"],
                           **RV32_VIRT)
    # The stack from picolibc's symbols (__stack 0x81000000, __stack_size 8 KiB: the ELF's, NOTES),
    # its peak the same 112 B past the limit; the map the arena tensor_arena 0x80ffd9c0-0x80ffe000
    # with hello_world's head 32 B and tail 684 B, as the real firmware printed them.
    assert "stack:                    0x80ffe000-0x81000000, size 8192 B" in text, text
    assert "peak depth:               >= 8304 B (8.1 KiB): 112 B past the 8192 B (8.0 KiB) stack" in text, text
    assert "arena 0 0x80ffd9c0 [" in text and "] 0x80ffe000" in text, text
    assert "head 0..+32, temp ..+32" in text and "tail +916..+1600" in text, text
    assert "load access fault: from core registers" in text and "mtval 0xa5000000: the faulting address" in text
    assert "VERDICT: the stack ran into the arena: 112 B past its limit, 112 B into the arena, down into " \
        "MicroAllocator" in text, text
    assert "a0 held 0xa5000000, the word the stack left at 0x80ffdf90 in MicroAllocator" in text, text
