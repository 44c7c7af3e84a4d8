"""TFLM's small C objects as the pretty-printers show them (gdb/printers.py): the rules on plain
values, no GDB. Field names and types: tensorflow/lite/core/c/common.h (TFLM 90b983c2, with
TF_LITE_STATIC_MEMORY's small TfLiteTensor: quantization, params, data, dims, bytes, type,
allocation_type, is_variable); element sizes: tensorflow/lite/micro/memory_helpers.cc
(TfLiteTypeSizeOf)."""
from collections.abc import Sequence

SHOWN = 16          # array elements shown (dims, scales, zero points); the rest is counted
QUANT_SHOWN = 4     # scales / zero points in a tensor's one-line summary
# A TfLiteIntArray / TfLiteFloatArray whose size is negative or above this is corrupt: a
# tensor's rank is at most a few dims, an operator's inputs a few hundred (no model has more).
MAX_SIZE = 1 << 16

# TfLiteTypeSizeOf (memory_helpers.cc): bytes of one element; types it refuses (string, variant,
# uint16, bfloat16) are left out. int4 is one byte an element there (TFLM unpacks it). The
# planner's type_size says the same (tests/fixtures/shared_definitions_golden.json).
ELEMENT_BYTES = {"float16": 2, "float32": 4, "float64": 8, "int16": 2, "int32": 4, "uint32": 4, "uint8": 1,
                 "int8": 1, "int64": 8, "uint64": 8, "bool": 1, "resource": 4, "complex64": 8, "complex128": 16,
                 "int4": 1}


def type_name(enum_text: str) -> str:
    """kTfLiteInt8 -> int8 (TfLiteType as GDB prints it); a value with no enumerator name (GDB
    prints a number or "(unknown: 0x2a)") -> "<corrupt: type ...>"."""
    if enum_text.startswith("kTfLite") and enum_text[7:].isalnum():
        return enum_text[7:].lower()
    return f"<corrupt: type {enum_text}>"


def size_problem(size: int, what: str) -> str | None:
    """"<corrupt: WHAT->size N>" ("<corrupt: size N>" without WHAT) for an array size no TFLM
    array has, else None."""
    if size < 0 or size > MAX_SIZE:
        return f"<corrupt: {what + '->' if what else ''}size {size}>"
    return None


def listed(values: Sequence, total: int, shown: int = SHOWN, fmt=str) -> str:
    """"[1, 49, 10, 1]"; with more than shown: the first ones, "...", and the count."""
    items = [fmt(v) for v in values[:shown]]
    if total > len(items):
        return "[" + ", ".join(items) + f", ...] ({total} elements)"
    return "[" + ", ".join(items) + "]"


def element_bytes(tname: str, dims: Sequence[int]) -> int | None:
    """Bytes of a tensor of type tname with these dims (TFLM's TfLiteEvalTensorByteLength rule:
    the element count times TfLiteTypeSizeOf), None for a type without a size or a negative dim."""
    size = ELEMENT_BYTES.get(tname)
    if size is None or any(d < 0 for d in dims):
        return None
    for d in dims:
        size *= d
    return size


def bytes_problem(nbytes: int, tname: str, dims: Sequence[int]) -> str | None:
    """A TfLiteTensor's bytes that its type and dims contradict: TFLM sets bytes to the element
    count times TfLiteTypeSizeOf (micro_allocator.cc InitializeTfLiteTensorFromFlatbuffer ->
    memory_helpers.cc BytesRequiredForTensor), from the same shape as dims. None when they agree
    or the type has no size here."""
    want = element_bytes(tname, dims)
    if want is not None and nbytes != want:
        return f"<corrupt: bytes {nbytes}, its type and dims make {want}>"
    return None


def room_problem(nbytes: int, room: int | None) -> str | None:
    """A TfLiteTensor's bytes running past the end of the arena its data starts in (room: bytes
    from the data to the arena's end): TFLM plans every arena tensor inside the arena
    (greedy_memory_planner.cc places each buffer below the arena's size)."""
    if room is not None and nbytes > room:
        return f"<corrupt: bytes {nbytes}, past the arena's end ({room} B from the data)>"
    return None


def enum_problem(enum_text: str, field: str) -> str | None:
    """An enum field with no enumerator name (GDB prints a number or "(unknown: 0x9)"), e.g.
    allocation_type outside TfLiteAllocationType's kTfLiteMemNone..kTfLiteNonCpu (common.h)."""
    return None if enum_text.startswith("kTfLite") and enum_text[7:].isalnum() else f"<corrupt: {field} {enum_text}>"


def bool_problem(text: str, field: str) -> str | None:
    """A bool field (is_variable) holding neither 0 nor 1: GDB prints other bytes as a number."""
    return None if text in ("true", "false", "0", "1") else f"<corrupt: {field} {text}>"


def unreadable(addr: int) -> str:
    return f"<unreadable at {addr:#x}>"
