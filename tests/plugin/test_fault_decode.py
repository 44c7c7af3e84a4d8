"""Fault decoding without GDB: the bit combinations QEMU cannot produce, frame sizes and the
alignment pad, and fault records (valid, stale, corrupt). Bit numbers: ARMv7-M ARM B3.2.15-16."""
import struct

import pytest

from arenascope_plugin.ports import cortex_m
from arenascope_plugin.ports.cortex_m import faultrecord
from conftest import ABI

FIXTURE = ABI["fault_record"]  # the golden layout (target_agent/abi/agent_abi_v1.json)


def record(addr_size=4, **over):
    """A record's bytes at the fixture's offsets for addr_size (test-side, independent of the
    plugin's own layout), sealed with the fixture's checksum rule unless checksum= is given."""
    lay = FIXTURE["layouts"][str(addr_size)]
    v = dict(magic=FIXTURE["magic"], version=FIXTURE["version"], size=lay["_size"], boot_count=3, fault_count=1,
             fault_boot=3, flags=1, exc_return=0xFFFFFFF9, sp=0x20005500, cfsr=0x8200, hfsr=0, mmfar=0,
             bfar=0xF0000000, shcsr=0x70000, icsr=5, frame=[0, 1, 2, 3, 12, 0x1F3, 0x10C, 0x41000000],
             checksums_addr=0, checksum_count=0, arch=0)
    v.update(over)
    data = bytearray(lay["_size"])
    for name, ftype in FIXTURE["fields"]:
        if name == "checksum":
            continue
        if ftype == "u32[8]":
            struct.pack_into("<8I", data, lay[name], *v[name])
        else:
            fmt = {"u16": "<H", "u32": "<I", "addr": "<Q" if addr_size == 8 else "<I"}[ftype]
            struct.pack_into(fmt, data, lay[name], v[name])
    end = lay["checksum"]
    struct.pack_into("<I", data, end, v.get("checksum", faultrecord.fnv1a(data[FIXTURE["checksummed_from"]:end])))
    return bytes(data)


@pytest.mark.parametrize("addr_size", [4, 8])
def test_plugin_record_layout_equals_the_golden_fixture(addr_size):
    assert [tuple(f) for f in FIXTURE["fields"]] == faultrecord.RECORD_FIELDS
    assert faultrecord.RECORD_LAYOUTS[addr_size] == FIXTURE["layouts"][str(addr_size)]
    assert (faultrecord.RECORD_MAGIC, faultrecord.RECORD_VERSION) == (FIXTURE["magic"], FIXTURE["version"])
    flags = FIXTURE["flags"]
    assert (faultrecord.FLAG_FRAME_COPIED, faultrecord.FLAG_PSP, faultrecord.FLAG_EXTENDED, faultrecord.FLAG_LAZY_FP,
            faultrecord.FLAG_NESTED) == (
        flags["frame_copied"], flags["psp"], flags["extended"], flags["lazy_fp"], flags["nested"])


def test_a_64_bit_host_record_gives_back_the_whole_table_address():
    table = 0x7FFD_1234_5678  # an x86-64 stack address: above 4 GiB
    data = record(addr_size=8, checksums_addr=table, checksum_count=7)
    rec = faultrecord.decode_record(data, 0x5555_5555_8000)
    assert rec.checksums_addr == table and rec.checksum_count == 7
    assert rec.frame[6] == 0x10C and rec.bfar == 0xF0000000
    with pytest.raises(faultrecord.RecordError, match="only 100 bytes read of its 104"):
        faultrecord.decode_record(data[:100], 0x5555_5555_8000)
    # read_record reads the header, then as many bytes as the record's size field says.
    image = bytes(16) + data + b"\xee" * 16
    reads = []

    def read(address, length):
        reads.append(length)
        return image[address - 0x1000:address - 0x1000 + length]

    assert faultrecord.read_record(read, 0x1010).checksums_addr == table and reads == [100, 4]
    with pytest.raises(faultrecord.RecordError, match="no fault record"):
        faultrecord.read_record(read, 0x1000)  # zeros: no magic
    # The checksum covers the high half of the address.
    torn = bytearray(data)
    torn[FIXTURE["layouts"]["8"]["checksums_addr"] + 5] ^= 1
    with pytest.raises(faultrecord.RecordError, match="checksum mismatch"):
        faultrecord.decode_record(bytes(torn), 0)


def test_version_1_records_of_32_bit_targets_are_still_read():
    # Version 1 (agents of 0.1.0): the 4-byte layout, byte for byte.
    rec = faultrecord.decode_record(record(version=1, checksums_addr=0x20001000, checksum_count=3), 0x20000000)
    assert rec.checksums_addr == 0x20001000 and rec.checksum_count == 3
    with pytest.raises(faultrecord.RecordError, match="version 1, size 104"):
        faultrecord.decode_record(record(addr_size=8, version=1), 0)
    with pytest.raises(faultrecord.RecordError, match="version 2, size 96"):
        faultrecord.decode_record(record(size=96), 0)


def test_every_bit_has_a_name_and_the_groups_are_right():
    lines = faultrecord.cfsr_lines(0xFFFFFFFF)
    assert len(lines) == len(faultrecord.CFSR_BITS) == 20  # ARMv7-M's 19 and ARMv8-M's STKOF
    assert lines[0].startswith("CFSR.MMFSR.IACCVIOL (bit 0)")
    assert any(line.startswith("CFSR.BFSR.LSPERR (bit 13)") for line in lines)
    assert lines[-1].startswith("CFSR.UFSR.DIVBYZERO (bit 25)")
    assert [line.split(" ")[0] for line in faultrecord.hfsr_lines(0xC0000002)] == ["HFSR.VECTTBL", "HFSR.FORCED",
                                                                                   "HFSR.DEBUGEVT"]


def test_imprecise_bus_error_has_no_bfar_and_is_explained():
    f = cortex_m.PORT.from_record(faultrecord.decode_record(record(cfsr=1 << 10, bfar=0x12345678), 0x20000000))
    assert f.status.bfar is None  # BFARVALID clear: BFAR is not reported
    assert any("imprecise bus error" in c and "BFAR is not valid" in c for c in faultrecord.cause_lines(f))


def test_lazy_fp_stacking_error_and_extended_frame_with_pad():
    rec = faultrecord.decode_record(record(cfsr=1 << 13, exc_return=0xFFFFFFE9, flags=1 | 4 | 8,
                                     frame=[0, 0, 0, 0, 0, 0x101, 0x200, 1 << 9 | 1 << 24]), 0x20000000)
    f = cortex_m.PORT.from_record(rec)
    assert faultrecord.cfsr_lines(f.status.cfsr) == [
        "CFSR.BFSR.LSPERR (bit 13): bus fault during lazy floating-point state preservation"]
    er = faultrecord.ExcReturn(0xFFFFFFE9)
    assert er.extended and not er.psp and er.thread_mode
    assert f.pre_fault_sp == 0x20005500 + 104 + 4  # extended frame, plus the 8-byte alignment pad (xPSR bit 9)
    assert f.status.lazy_fp and "lazy stacking pending" in f.frame_note
    basic = cortex_m.PORT.from_record(faultrecord.decode_record(record(frame=[0] * 7 + [0x01000000]), 0))
    assert basic.pre_fault_sp == 0x20005500 + 32


def test_exc_return_values():
    assert faultrecord.ExcReturn(0xFFFFFFF1).describe().startswith(
        "0xfffffff1: returns to handler mode, frame on the main")
    assert "process (PSP)" in faultrecord.ExcReturn(0xFFFFFFFD).describe()
    assert not faultrecord.ExcReturn(0x000001F3).valid


def test_stacking_failure_and_nested_faults():
    f = cortex_m.PORT.from_record(faultrecord.decode_record(record(cfsr=1 << 4, flags=16), 0))
    assert f.frame is None and "not stacked" in f.frame_note
    causes = faultrecord.cause_lines(f)
    assert any("could not be stacked" in c for c in causes)
    assert any("first fault's" in c for c in causes)


def test_records_refused_or_read():
    with pytest.raises(faultrecord.RecordError, match="no fault record"):
        faultrecord.decode_record(record(magic=0), 0x20000000)
    with pytest.raises(faultrecord.RecordError, match="checksum mismatch"):
        faultrecord.decode_record(record(checksum=1), 0x20000000)
    with pytest.raises(faultrecord.RecordError, match="version 3"):
        faultrecord.decode_record(record(version=3), 0x20000000)
    rec = faultrecord.decode_record(record(boot_count=4, fault_boot=3), 0)
    assert rec.fault_boot < rec.boot_count  # a fault from before the last reset
    f = cortex_m.PORT.from_record(rec)
    assert f.exception == "BusFault" and f.status.bfar == 0xF0000000 and f.frame[6] == 0x10C


def test_armv8m_exc_return_bits():
    """ARMv8-M DDI 0553 D1.2.26: ES bit 0, SPSEL 2, Mode 3, FType 4, DCRS 5, S 6; bits 5, 6 and 0 are 1 on
    ARMv7-M, whose values decode as before."""
    ns = faultrecord.ExcReturn(0xFFFFFFBC)  # Non-secure thread, PSP, basic frame, Non-secure stack
    assert ns.valid and ns.psp and ns.thread_mode and not ns.extended
    assert not ns.secure_exception and not ns.secure_stack and not ns.callee_stacked
    assert ns.describe().endswith("; ARMv8-M: the exception went to Non-secure state, the frame is on the "
                                  "Non-secure stack")
    callee = faultrecord.ExcReturn(0xFFFFFFDD)  # DCRS 0: r4-r11 and the integrity signature stacked
    assert callee.valid and callee.callee_stacked and callee.secure_stack
    assert "r4-r11 and the integrity signature were stacked too" in callee.describe()
    for v7 in (0xFFFFFFE1, 0xFFFFFFE9, 0xFFFFFFED, 0xFFFFFFF1, 0xFFFFFFF9, 0xFFFFFFFD):
        assert faultrecord.ExcReturn(v7).valid and "ARMv8-M" not in faultrecord.ExcReturn(v7).describe()
    assert not faultrecord.ExcReturn(0xFFFFFFFF).valid  # bit 1 is reserved 0


def test_stack_limit_overflow_and_baseline_cores():
    assert faultrecord.status_lines(1 << 20, 0, "v8-M.mainline") == [
        "CFSR.UFSR.STKOF (bit 20): stack overflow (ARMv8-M): a push went below the stack limit register "
        "(MSPLIM or PSPLIM), stopped before it wrote past the limit"]
    for arch in ("v6-M", "v8-M.baseline"):
        (line,) = faultrecord.status_lines(0, 0, arch)
        assert line.startswith(f"ARM{arch} has no CFSR, HFSR, MMFAR or BFAR: HardFault is its only fault")
    assert faultrecord.status_lines(0, 1 << 30, "v7E-M") == faultrecord.hfsr_lines(1 << 30)


def test_the_faulting_thumb_access_is_decoded():
    """ARMv6-M ARM A6.7: LDR (immediate) T1 0x6800 | imm5 << 6 | Rn << 3 | Rt; STRH (register) T1
    0x5200 | Rm << 6 | Rn << 3 | Rt; addresses from the stacked r0-r3."""
    frame = [0x20000001, 0x20000100, 6, 0, 0, 0, 0, 0]
    assert faultrecord.thumb_access(0x6800, frame) == ("ldr r0, [r0, #0]", 0x20000001, 4)
    assert faultrecord.thumb_access(0x6848, frame) == ("ldr r0, [r1, #4]", 0x20000104, 4)
    assert faultrecord.thumb_access(0x5288, frame) == ("strh r0, [r1, r2]", 0x20000106, 2)
    assert faultrecord.thumb_access(0x6820, frame)[1] is None  # base r4: not stacked
    assert faultrecord.thumb_access(0xDE00, frame) is None  # UDF is no access
    assert "unaligned, and this core faults every unaligned access" in faultrecord.baseline_access_line(0x6800, frame)
    assert "aligned, so a bus error" in faultrecord.baseline_access_line(0x6848, frame)


def test_a_frame_below_callee_saved_registers_is_read_40_bytes_up():
    """ARMv8-M DDI 0553 B3.19: with EXC_RETURN.DCRS 0 the exception entry stacks the integrity
    signature (0xFEFA125B for an integer frame), a reserved word and r4-r11 at SP, the basic frame
    40 B above. The agent copies 8 words at SP; the plugin takes the frame from SP + 40 instead."""
    sp = 0x38001000
    words = [0xFEFA125B, 0] + [0x44440000 + r for r in range(4, 12)] + [0, 1, 2, 3, 12, 0x1F3, 0x10C, 0x41000000]
    rec = faultrecord.read_record(lambda a, n: record(exc_return=0xFFFFFFDD, sp=sp, frame=words[:8])[a:a + n], 0)
    f = cortex_m.PORT.from_record(rec)
    assert f.frame is None and f.frame_addr == sp + 40 and "DCRS 0" in f.frame_note
    assert f.pre_fault_sp == sp + 40 + 32


def test_secure_fault_status_bits():
    """DDI 0553 D1.2.209: SFSR INVEP 0 ... SFARVALID 6, LSERR 7."""
    assert faultrecord.sfsr_lines(0) == []
    lines = faultrecord.sfsr_lines(1 << 0 | 1 << 3 | 1 << 6)
    assert [line.split(" (")[0] for line in lines] == ["SFSR.INVEP", "SFSR.AUVIOL", "SFSR.SFARVALID"]
    assert lines[1] == ("SFSR.AUVIOL (bit 3): attribution unit violation: Non-secure code accessed memory the "
                        "SAU/IDAU marks Secure")
    assert faultrecord.EXCEPTIONS[7] == "SecureFault"
