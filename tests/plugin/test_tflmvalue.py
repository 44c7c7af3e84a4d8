"""The pretty-printers' rules on plain values (decode/tflmvalue.py) and the owner line
(analyse/figures.owner_brief) on a descriptor image; expected text written by hand from the
rules docs/pretty-printers.md states."""
from arenascope_plugin.acquire.reader import ImageReader
from arenascope_plugin.analyse import figures
from arenascope_plugin.decode import tflmvalue as tv
from arenascope_plugin.decode.session import DescriptorSession
from conftest import ARENA_ADDR, DESC_ADDR, TABLE_ADDR, demo_like


def _desc():
    desc, table = demo_like(4)
    return DescriptorSession(ImageReader([(DESC_ADDR, desc), (TABLE_ADDR, table)]), DESC_ADDR).read()


def test_type_names():
    assert tv.type_name("kTfLiteInt8") == "int8"
    assert tv.type_name("kTfLiteFloat32") == "float32"
    assert tv.type_name("77") == "<corrupt: type 77>"
    assert tv.type_name("(unknown: 0x4d)") == "<corrupt: type (unknown: 0x4d)>"


def test_sizes_and_lists():
    assert tv.size_problem(4, "dims") is None
    assert tv.size_problem(123456, "dims") == "<corrupt: dims->size 123456>"
    assert tv.size_problem(-1, "") == "<corrupt: size -1>"
    assert tv.size_problem(1 << 16, "dims") is None and tv.size_problem((1 << 16) + 1, "dims")
    assert tv.listed([1, 49, 10, 1], 4) == "[1, 49, 10, 1]"
    assert tv.listed(list(range(16)), 20) == "[" + ", ".join(map(str, range(16))) + ", ...] (20 elements)"
    assert tv.listed([], 0) == "[]"


def test_element_bytes():
    assert tv.element_bytes("int8", [1, 49, 10, 1]) == 490
    assert tv.element_bytes("float32", [2, 3]) == 24
    assert tv.element_bytes("int4", [2]) == 2              # one byte an element in TfLiteTypeSizeOf
    assert tv.element_bytes("uint16", [2]) is None         # TfLiteTypeSizeOf refuses it
    assert tv.element_bytes("int16", [-1, 2]) is None


def test_owner_brief():
    d = _desc()
    # tensor 1 (128 B at +0, scopes 0..1) and tensor 3 (64 B at +0, scope 2) share +0
    assert figures.owner_brief(d, ARENA_ADDR, 128) == "arena 0 +0: tensor 1 (head (planned), lifetime 0..1)"
    assert figures.owner_brief(d, ARENA_ADDR, 60) == "arena 0 +0: tensor 3 (head (planned), lifetime 2..2)"
    assert figures.owner_brief(d, ARENA_ADDR) == \
        "arena 0 +0 (head (planned)): one of 2 regions over time (tensor 1, tensor 3)"
    assert figures.owner_brief(d, ARENA_ADDR + 1000) == "arena 0 +1000 (free band): no region owns it"
    assert figures.owner_brief(d, ARENA_ADDR + 4096) is None
    assert figures.place(d, ARENA_ADDR + 130)[0][1:3] == (130, "head (planned)")


def test_owner_brief_by_tensor_index():
    d = _desc()
    # the index wins over the size (real TFLM's overlays often share offset and rounded size)
    assert figures.owner_brief(d, ARENA_ADDR, tensor=3) == "arena 0 +0: tensor 3 (head (planned), lifetime 2..2)"
    assert figures.owner_brief(d, ARENA_ADDR, 128, tensor=3) == "arena 0 +0: tensor 3 (head (planned), lifetime 2..2)"
    # an index no region at that offset has: as without one
    assert figures.owner_brief(d, ARENA_ADDR, tensor=2) == \
        "arena 0 +0 (head (planned)): one of 2 regions over time (tensor 1, tensor 3)"


def test_used_and_room_left():
    assert figures.used_bytes(256, 288, 3072, 4096) == 288 + 1024
    s = figures.StackFigures(low=1000, high=2000, sp=1900, hwm=1800, source="scan", painted=True, arena_end=900)
    assert (s.room, s.peak, s.room_left) == (1100, 200, 900)   # hwm - arena end
    assert figures.StackFigures(low=1000, high=2000, sp=None, hwm=None, source="none", painted=False,
                                arena_end=900).room_left is None


def test_fields_tflm_could_not_have_set_are_marked():
    # bytes = element count x TfLiteTypeSizeOf (memory_helpers.cc BytesRequiredForTensor)
    assert tv.bytes_problem(490, "int8", [1, 49, 10, 1]) is None
    assert tv.bytes_problem(40, "float32", [1, 10]) is None
    assert tv.bytes_problem(151587081, "int8", [1, 49, 10, 1]) == (
        "<corrupt: bytes 151587081, its type and dims make 490>")
    assert tv.bytes_problem(7, "string", [3]) is None  # no size known: not judged
    assert tv.room_problem(100, 100) is None and tv.room_problem(101, 100) == (
        "<corrupt: bytes 101, past the arena's end (100 B from the data)>")
    assert tv.room_problem(10 ** 9, None) is None
    assert tv.enum_problem("kTfLiteArenaRw", "allocation_type") is None
    assert tv.enum_problem("9", "allocation_type") == "<corrupt: allocation_type 9>"
    assert tv.enum_problem("(unknown: 0x9)", "allocation_type") == "<corrupt: allocation_type (unknown: 0x9)>"
    assert [tv.bool_problem(x, "is_variable") for x in ("true", "false", "0", "1")] == [None] * 4
    assert tv.bool_problem("9", "is_variable") == "<corrupt: is_variable 9>"
