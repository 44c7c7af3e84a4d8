"""The demo firmware on QEMU mps2-an386 (Cortex-M4F), read over GDB's remote protocol.

Expected values come from the ELF symbol table, the linker map, the ABI fixture and the real
TFLM figures in ../shared (parts that need ../shared skip cleanly without it).
"""
import json

import pytest

from harness import (
    ABI,
    DEMO_IS_DSCNN,
    FIRMWARE,
    FIRMWARE_MAP,
    PLANNER,
    TFLM_FIGURES,
    decode,
    decode_fault_record,
    decode_regions,
    demo_plan,
    dwarf_layout,
    elf_symbols,
    gdb_batch,
    map_sections,
    qemu,
)

NONE = ABI["sentinels"]["none"]
KIND = ABI["kinds"]
PLAN = demo_plan() if PLANNER.exists() else None  # the demo's layout: the planner's prediction for its model
ARENA_BYTES = PLAN["arena"]["recommended_bytes"] if PLAN else 0  # examples/demo/demo_plan.h
HEAD_REGIONS = len(PLAN["buffers"]) if PLAN else 0
TAIL_REGIONS = len(PLAN["tail"]["regions"]) if PLAN else 0
TEMP_BYTES = 64              # the demo's first operator takes 64 B of temp above the head
GUARD_BYTES = 256
STACK_BYTES = 8192           # mps2_an386.ld
DESC_BYTES = ABI["layouts"]["4"]["descriptor"]["_size_one_arena"]
CFSR, HFSR, MMFAR, BFAR = 0xE000ED28, 0xE000ED2C, 0xE000ED34, 0xE000ED38

pytestmark = pytest.mark.skipif(not FIRMWARE.exists(), reason=f"{FIRMWARE} not built")


def run_to_invoke(count=1, before=(), after=(), reads=()):
    """Boots the firmware, stops in demo_invoke_done after the count-th measured invoke (a
    conditional breakpoint, so the stop is exact), runs `after`, dumps reads."""
    with qemu() as (port, log):
        commands = list(before)
        if count:
            commands += [f"break demo_invoke_done if invokes == {count}", "continue", "delete"]
        commands += list(after)
        dump, text = gdb_batch(FIRMWARE, commands, reads, remote_port=port)
        return dump, text, log.read_text(errors="replace")


def descriptor_reads():
    return [("desc", "&arenascope_descriptor", DESC_BYTES),
            ("regions", "arenascope_descriptor.arena[0].regions_addr", 16 * max(HEAD_REGIONS + TAIL_REGIONS, 1))]


def test_firmware_boots_and_reaches_the_invoke_breakpoint():
    dump, text, uart = run_to_invoke(2, reads=[("invokes", "&demo_sink", 4)])
    assert dump["frame"] == "demo_invoke_done", text
    assert int.from_bytes(bytes.fromhex(dump["mem"]["invokes"]), "little") in (1, 2)
    assert "arena ready" in uart


def test_descriptor_matches_symbols_and_linker_map():
    syms = elf_symbols(FIRMWARE)
    sections = map_sections(FIRMWARE_MAP)
    dump, text, _ = run_to_invoke(3, reads=descriptor_reads())
    raw = bytes.fromhex(dump["mem"]["desc"])
    d = decode("descriptor", raw, 4)
    a = d["arena"][0]

    # Found where the symbol table says, with the header the ABI fixture defines.
    assert dump["addr"]["desc"] == syms["arenascope_descriptor"]
    assert d["magic"] == ABI["magic"].encode()
    assert (d["abi_major"], d["abi_minor"]) == (ABI["abi_major"], ABI["abi_minor"])
    assert d["descriptor_size"] == DESC_BYTES
    assert d["addr_size"] == 4 and d["arena_capacity"] == 1 and d["arena_count"] == 1
    assert d["arena_entry_size"] == ABI["layouts"]["4"]["arena"]["_size"]
    assert d["region_entry_size"] == 16
    assert d["seq"] % 2 == 0
    assert d["canary_pattern"] == 0xAAAAAAAA and d["stack_paint_pattern"] == 0xCCCCCCCC
    assert d["invoke_phase"] == 2 * 3  # stopped after the 3rd measured invoke

    # Stack, guard band and arena where the linker put them, in that order.
    arena_addr, arena_size = sections[".tensor_arena"]
    guard_addr, guard_size = sections[".stack_guard"]
    stack_addr, stack_size = sections[".stack"]
    assert (arena_addr, arena_size) == (syms["tensor_arena"], ARENA_BYTES)
    assert (guard_addr, guard_size) == (syms["__guard_start"], GUARD_BYTES)
    assert stack_addr == syms["__StackLimit"] and stack_addr + stack_size == syms["__StackTop"]
    assert stack_size == STACK_BYTES
    assert arena_addr + arena_size == guard_addr and guard_addr + guard_size == stack_addr
    assert (d["stack"]["low_addr"], d["stack"]["high_addr"]) == (syms["__StackLimit"], syms["__StackTop"])
    assert (d["guard"]["low_addr"], d["guard"]["high_addr"]) == (syms["__guard_start"], syms["__guard_end"])
    assert a["base_addr"] == syms["tensor_arena"] and a["size_bytes"] == ARENA_BYTES
    assert a["alignment_bytes"] == 16 and a["base_addr"] % 16 == 0

    # Measured on target: stack used but not overflowed; guard and free band intact.
    assert d["flags"] & ABI["descriptor_flags"]["measured"]
    assert 0 < d["stack"]["touched_lo"] < STACK_BYTES
    assert d["guard"]["touched_lo"] == NONE and d["guard"]["touched_hi"] == NONE
    assert a["canary"]["touched_lo"] == NONE and a["canary"]["touched_hi"] == NONE

    # The region table: the planned head regions, then every tail allocation, published once each.
    assert a["region_count"] == a["region_capacity"] == HEAD_REGIONS + TAIL_REGIONS
    assert d["layout_generation"] == HEAD_REGIONS + TAIL_REGIONS
    regions = decode_regions(bytes.fromhex(dump["mem"]["regions"]), a["region_count"])
    head = [r for r in regions if r["kind"] in (KIND["tensor"], KIND["scratch"])]
    tail = [r for r in regions if r["kind"] in (KIND["persistent"], KIND["metadata"])]
    assert len(head) == HEAD_REGIONS and len(tail) == TAIL_REGIONS
    assert [(r["offset_bytes"], r["size_bytes"]) for r in tail] == [
        (t["offset"], t["size"]) for t in PLAN["tail"]["regions"]]
    assert a["head_bytes"] == max(r["offset_bytes"] + r["size_bytes"] for r in head)
    assert a["tail_offset"] == min(r["offset_bytes"] for r in tail)
    assert max(r["offset_bytes"] + r["size_bytes"] for r in tail) == ARENA_BYTES
    assert sum(r["size_bytes"] for r in tail) <= ARENA_BYTES - a["tail_offset"]
    assert a["temp_bytes"] == a["head_bytes"] + TEMP_BYTES
    # The free band the agent filled is the word-trimmed gap between temp and tail.
    assert a["canary"]["low_addr"] == a["base_addr"] + (a["temp_bytes"] + 3) // 4 * 4
    assert a["canary"]["high_addr"] == a["base_addr"] + a["tail_offset"] // 4 * 4


@pytest.mark.skipif(not TFLM_FIGURES.exists(), reason="../shared/tflm-figures absent")
@pytest.mark.skipif(not DEMO_IS_DSCNN, reason="the demo was built for another model")
def test_arena_layout_is_tflms_own_plan_for_the_model():
    """The project's DS-CNN has MLPerf Tiny's DS-CNN graph: real TFLM on a Cortex-M4 printed
    this plan and measured this tail for mlperf_tiny_kws_ref_model.tflite (tflm-figures)."""
    fig = json.loads(TFLM_FIGURES.read_text())["models"]["mlperf_tiny_kws_ref_model.tflite"]["arm_m4"]
    dump, _, _ = run_to_invoke(1, reads=descriptor_reads())
    a = decode("descriptor", bytes.fromhex(dump["mem"]["desc"]), 4)["arena"][0]
    regions = decode_regions(bytes.fromhex(dump["mem"]["regions"]), a["region_count"])
    head = [(r["size_bytes"], r["offset_bytes"], r["first_use"], r["last_use"])
            for r in regions if r["kind"] in (KIND["tensor"], KIND["scratch"])]
    plan = [(p["size"], p["offset"], p["first_used"], p["last_used"]) for p in fig["plan"]]
    assert head == plan
    assert a["head_bytes"] == fig["head_bytes"]
    assert ARENA_BYTES - a["tail_offset"] == fig["tail_bytes"]
    assert ARENA_BYTES * 100 >= fig["min_arena_bytes"] * 115  # the recommended arena: minimum + 15 %
    scratch = [r for r in regions if r["kind"] == KIND["scratch"]]
    assert len(scratch) == fig["scratch_buffer_requests"] == 0


def test_magic_appears_once_in_ram_and_never_in_the_flash_image():
    from elftools.elf.constants import SH_FLAGS
    from elftools.elf.elffile import ELFFile
    magic = ABI["magic"].encode()
    with open(FIRMWARE, "rb") as f:
        elf = ELFFile(f)
        ram, image = [], b""
        for s in elf.iter_sections():
            if not s["sh_flags"] & SH_FLAGS.SHF_ALLOC:
                continue
            if s["sh_flags"] & SH_FLAGS.SHF_WRITE:
                ram.append((s.name, s["sh_addr"], s["sh_size"]))
            if s["sh_type"] == "SHT_PROGBITS":
                image += s.data()
    assert magic not in image  # no initializer copy, no contiguous literal
    reads = [(name, hex(addr), size) for name, addr, size in ram]
    dump, _, _ = run_to_invoke(1, reads=reads)
    hits = []
    for name, addr, _ in ram:
        data = bytes.fromhex(dump["mem"][name])
        at = data.find(magic)
        while at >= 0:
            hits.append(addr + at)
            at = data.find(magic, at + 1)
    assert hits == [elf_symbols(FIRMWARE)["arenascope_descriptor"]]


def test_magic_is_all_zero_until_init_runs():
    dump, _, _ = run_to_invoke(0, before=["break arenascope_init", "continue"],
                               reads=[("desc", "&arenascope_descriptor", 8)])
    assert dump["frame"] == "arenascope_init"
    assert bytes.fromhex(dump["mem"]["desc"]) == bytes(8)


def test_stack_was_painted_at_reset_before_main():
    syms = elf_symbols(FIRMWARE)
    dump, _, _ = run_to_invoke(0, before=["break main", "continue"],
                               reads=[("stack", "(char *)&__StackLimit", STACK_BYTES - 256)])
    data = bytes.fromhex(dump["mem"]["stack"])
    assert dump["frame"] == "main"
    assert data == b"\xcc" * len(data), "stack below the reset frames is not all 0xCC"
    assert syms["__StackTop"] - syms["__StackLimit"] == STACK_BYTES


FAULT_BREAKS = ["break HardFault_Handler", "break BusFault_Handler", "break UsageFault_Handler",
                "break MemManage_Handler"]
FAULT_READS = [("cfsr", hex(CFSR), 4), ("hfsr", hex(HFSR), 4), ("bfar", hex(BFAR), 4)]


def run_scenario(scenario, extra_reads=()):
    return run_to_invoke(1, after=FAULT_BREAKS + [f"set var demo_scenario = {scenario}", "continue"],
                         reads=FAULT_READS + list(extra_reads))


def word(dump, name):
    return int.from_bytes(bytes.fromhex(dump["mem"][name]), "little")


# ARMv7-M ARM B3.2.15 (CFSR) and B3.2.16 (HFSR): bit numbers of the fault status register.
PRECISERR, BFARVALID, UNDEFINSTR, INVSTATE, DIVBYZERO = 1 << 9, 1 << 15, 1 << 16, 1 << 17, 1 << 25
FORCED = 1 << 30


def test_bus_fault_scenario():
    dump, text, _ = run_scenario(3)
    assert dump["frame"] == "BusFault_Handler", text
    assert word(dump, "cfsr") == PRECISERR | BFARVALID
    assert word(dump, "bfar") == 0xF0000000


def test_hard_fault_scenario_is_forced_with_handlers_disabled():
    dump, text, _ = run_scenario(4)
    assert dump["frame"] == "HardFault_Handler", text
    assert word(dump, "hfsr") & FORCED
    assert word(dump, "cfsr") == PRECISERR | BFARVALID
    assert word(dump, "bfar") == 0xF0000000


@pytest.mark.parametrize("scenario,bit", [(5, UNDEFINSTR), (6, DIVBYZERO), (7, INVSTATE)])
def test_usage_fault_scenarios(scenario, bit):
    dump, text, _ = run_scenario(scenario)
    assert dump["frame"] == "UsageFault_Handler", text
    assert word(dump, "cfsr") == bit


def test_tensor_overrun_is_measured_in_the_free_band():
    dump, text, _ = run_to_invoke(2, after=["set var demo_scenario = 2", "break demo_invoke_done if invokes == 3",
                                            "continue"], reads=descriptor_reads())
    assert dump["frame"] == "demo_invoke_done", text
    a = decode("descriptor", bytes.fromhex(dump["mem"]["desc"]), 4)["arena"][0]
    regions = decode_regions(bytes.fromhex(dump["mem"]["regions"]), a["region_count"])
    # Operator 1 (scope 2) writes its output 128 bytes too long.
    out = next(r for r in regions if r["kind"] == KIND["tensor"] and r["first_use"] == 2)
    end = out["offset_bytes"] + out["size_bytes"] + 128
    band_lo = a["canary"]["low_addr"] - a["base_addr"]
    assert a["canary"]["touched_lo"] == 0  # the band starts inside the overrun
    assert a["canary"]["touched_hi"] == end - band_lo


def test_stack_into_arena_overwrites_the_tail_and_the_next_invoke_faults():
    syms = elf_symbols(FIRMWARE)
    dump, text, _ = run_scenario(1, extra_reads=[
        ("guard", "(char *)&__guard_start", GUARD_BYTES),
        ("nodes", "(char *)nodes", 4)])
    assert dump["frame"] == "BusFault_Handler", text
    # The guard band lost its canary: the stack went through it.
    guard = bytes.fromhex(dump["mem"]["guard"])
    assert guard != b"\xaa" * GUARD_BYTES
    # The operator table's first registration pointer now holds the recursion's frame bytes,
    # and loading the kernel's invoke pointer through it is the precise bus fault.
    assert word(dump, "nodes") == 0x5A5A5A5A
    assert word(dump, "cfsr") == PRECISERR | BFARVALID
    # The load is at 0x5A5A5A5A (unaligned); QEMU 7.2 reports the word address in BFAR.
    assert word(dump, "bfar") & ~3 == 0x5A5A5A58
    assert syms["__guard_start"] < syms["__StackLimit"]


def elf_function(name):
    """(start, end) of a function from the ELF symbol table (thumb bit cleared)."""
    from elftools.elf.elffile import ELFFile
    with open(FIRMWARE, "rb") as f:
        for s in ELFFile(f).get_section_by_name(".symtab").iter_symbols():
            if s.name == name and s["st_info"]["type"] == "STT_FUNC":
                return s["st_value"] & ~1, (s["st_value"] & ~1) + s["st_size"]
    raise KeyError(name)


def test_fault_record_layout_of_the_firmware_is_the_fixtures():
    # The Cortex-M4 compiler's layout (DWARF) against the golden fixture's 4-byte column.
    fixture = ABI["fault_record"]
    fields = [f for f, _ in fixture["fields"]]
    assert dwarf_layout(FIRMWARE, "arenascope_fault_record_t", fields) == fixture["layouts"]["4"]


def test_fault_record_after_a_bus_fault():
    syms = elf_symbols(FIRMWARE)
    size = ABI["fault_record"]["layouts"]["4"]["_size"]
    dump, text, _ = run_to_invoke(1, after=["break arenascope_fault_hook", "set var demo_scenario = 3", "continue"],
                                  reads=[("rec", "&arenascope_fault_record", size),
                                         ("desc", "&arenascope_descriptor", DESC_BYTES)])
    assert dump["frame"] == "arenascope_fault_hook", text
    r = decode_fault_record(bytes.fromhex(dump["mem"]["rec"]), 4)
    assert r["magic"] == ABI["fault_record"]["magic"] and r["version"] == ABI["fault_record"]["version"]
    assert r["size"] == size and r["_checksum_ok"]
    assert (r["boot_count"], r["fault_count"], r["fault_boot"]) == (1, 1, 1)  # this boot's fault
    assert r["cfsr"] == PRECISERR | BFARVALID and r["bfar"] == 0xF0000000
    assert r["exc_return"] == 0xFFFFFFF9                     # thread mode, MSP, basic frame (ARMv7-M B1.5.8)
    assert r["flags"] == ABI["fault_record"]["flags"]["frame_copied"]  # frame copied; MSP; no FP context
    assert r["icsr"] & 0x1FF == 5                            # VECTACTIVE: BusFault is exception 5
    lo, hi = elf_function("provoke")
    pc = r["frame"][6]
    assert lo <= pc < hi, f"stacked PC {pc:#x} not in provoke {lo:#x}-{hi:#x}"
    assert syms["__StackLimit"] <= r["sp"] < syms["__StackTop"]
    assert r["checksums_addr"] == syms["region_checksums"] and r["checksum_count"] == HEAD_REGIONS + TAIL_REGIONS
    d = decode("descriptor", bytes.fromhex(dump["mem"]["desc"]), 4)
    assert d["fault_record_addr"] == syms["arenascope_fault_record"]
