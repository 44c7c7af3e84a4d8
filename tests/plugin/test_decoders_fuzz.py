"""Property tests (python3-hypothesis) of the decoders that take target bytes: on any bytes they
return a model or raise their own error with a message, never anything else (issue 15, item 5).
Hostile bytes are what a smashed target holds: the plugin must say so, not crash GDB."""
import json
import struct

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from arenascope_plugin.acquire.reader import ImageReader, MemoryReadError
from arenascope_plugin.analyse import figures
from arenascope_plugin.decode import descriptor
from arenascope_plugin.decode.session import DescriptorSession, TornReadError
from arenascope_plugin.ports import cortex_m
from arenascope_plugin.ports.cortex_m import faultrecord
from arenascope_plugin.present import snapshot
from conftest import DESC_ADDR, ROOT, TABLE_ADDR, demo_like

SETTINGS = settings(max_examples=400, deadline=None)


def _mutate(data, edits):
    out = bytearray(data)
    for at, value in edits:
        out[at % len(out)] = value
    return bytes(out)


@SETTINGS
@given(st.binary(min_size=0, max_size=512))
def test_random_bytes_never_crash_the_descriptor_decoder(data):
    try:
        descriptor.decode_descriptor(data, DESC_ADDR)
    except descriptor.DecodeError as e:
        assert str(e)


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(0, 255)), min_size=1, max_size=12))
def test_a_valid_descriptor_with_bytes_changed_decodes_or_says_why(edits):
    desc, _table = demo_like()
    try:
        descriptor.decode_descriptor(_mutate(desc, edits), DESC_ADDR)
    except descriptor.DecodeError as e:
        assert str(e)


@SETTINGS
@given(st.binary(max_size=400), st.integers(0, 40), st.sampled_from([0, 1, 8, 15, 16, 17, 64]))
def test_random_region_tables_never_crash(data, count, entry_size):
    try:
        descriptor.decode_regions(data, count, entry_size)
    except descriptor.DecodeError as e:
        assert str(e)


@SETTINGS
@given(st.binary(min_size=0, max_size=128))
def test_random_bytes_never_crash_the_fault_record_decoder(data):
    try:
        rec = faultrecord.decode_record(data, 0x20000000)
    except faultrecord.RecordError as e:
        assert str(e)
        return
    # A record that passed its magic and checksum decodes into a fault without error.
    f = cortex_m.PORT.from_record(rec)
    faultrecord.cause_lines(f)
    faultrecord.cfsr_lines(f.status.cfsr)


@SETTINGS
@given(st.lists(st.integers(0, 0xFFFFFFFF), min_size=23, max_size=23))
def test_any_checksummed_record_decodes(words):
    """A record with the right magic, version, size and checksum around random fields: decoded,
    or refused as inconsistent (a fault from a boot later than the count), never a crash."""
    body = struct.pack("<HH", 1, 100) + struct.pack("<22I", *words[:22])
    body = body[:92]
    data = struct.pack("<I", faultrecord.RECORD_MAGIC) + body
    data += struct.pack("<I", faultrecord.fnv1a(data[4:96]))
    try:
        rec = faultrecord.decode_record(data, 0x20000000)
    except faultrecord.RecordError as e:
        assert "corrupt record" in str(e)
        return
    # Every decode path is total (issue 37): any combination of bits, with or without a copied
    # frame (CFSR.INVSTATE with no frame raised a TypeError), on either architecture's reading.
    from arenascope_plugin.ports import riscv  # pylint: disable=import-outside-toplevel
    for port in (cortex_m.PORT, riscv.PORT):
        f = port.from_record(rec)
        assert all(isinstance(line, str) for line in f.cause_lines() + f.status_lines() + port.report_lines(f))
        assert all(isinstance(r.name, str) for r in f.registers())
        if f.frame:
            port.frame_lines(f)
        f.pre_fault_sp, f.fault_address, f.stack_limit_stopped, f.on_thread_stack  # noqa: B018


@SETTINGS
@given(st.integers(0, 2 ** 32), st.lists(st.tuples(st.integers(0, 0x2FFF), st.integers(0, 255)), max_size=64))
def test_tflm_objects_of_any_bytes_are_assessed_never_raised(seed, edits):
    """TFLM's objects over random RAM, or a sound image with bytes changed: tflmstate.assess and
    the verdicts return, whatever the pointers hold (unreadable or implausible is evidence)."""
    import random  # pylint: disable=import-outside-toplevel

    from arenascope_plugin.analyse import postmortem  # pylint: disable=import-outside-toplevel
    from arenascope_plugin.decode import tflmstate
    from test_tflm_state import FACTS, STACK_LO, Image, layout, stack_figures  # pylint: disable=import-outside-toplevel
    noise = random.Random(seed).randbytes(0x3000)
    for mem in (bytearray(noise), bytearray(_mutate(bytes(Image().mem), edits) if edits else Image().mem)):
        img = Image()
        img.mem = mem
        reader = img.reader()
        state = tflmstate.assess(reader, layout(), 0x20000100, FACTS, constructor_tail=116)
        assert state.condition in tflmstate.CONDITIONS
        stack = stack_figures(STACK_LO)
        found = [postmortem.stack_into_arena(reader, FACTS, state, stack, None, {}),
                 postmortem.allocation(state, None, postmortem.Halt(), {}, reader)]
        postmortem.damaged(state, stack, [v for v in found if v])


SCHEMA = jsonschema.Draft202012Validator(json.loads((ROOT / "docs" / "snapshot-schema.json").read_text()))


@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(0, 255)), min_size=1, max_size=8),
       st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(0, 255)), max_size=8))
def test_a_damaged_descriptor_and_table_give_checks_and_a_schema_valid_snapshot(edits, table_edits):
    """Whatever a few changed bytes of the descriptor and its region table make, the session
    reads it or says why, and what it reads gives checks and a snapshot keeping its schema (a
    region of a kind the ABI lacks, which broke it, is a corrupt table now: issue 37)."""
    desc_bytes, table = demo_like()
    reader = ImageReader([(DESC_ADDR, _mutate(desc_bytes, edits)), (TABLE_ADDR, _mutate(table, table_edits))])
    try:
        d = DescriptorSession(reader, DESC_ADDR, ram_ranges=[(DESC_ADDR, DESC_ADDR + 0x10000)]).read()
    except (descriptor.DecodeError, MemoryReadError, TornReadError) as e:
        assert str(e)
        return
    figs = {a.index: figures.arena_figures(a) for a in d.arenas}
    s = figures.stack_figures(d)
    checks = figures.checks(d, s, figs)
    assert (figures.worst(checks) == "FAIL") or not d.corrupt  # a corrupt field is never a PASS
    snap = snapshot.build(d, figs, s, checks, {"elf": "fw.elf", "located_by": "symbol"})
    errors = [f"{e.json_path}: {e.message}" for e in SCHEMA.iter_errors(snap)]
    assert not errors, errors[:3]
