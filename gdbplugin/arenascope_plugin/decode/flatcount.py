"""How many tensors a TFLite model holds, read from the model flatbuffer where the firmware keeps
it (the MicroInterpreter's `model_`, the root table GetModel returns): the pretty-printers' tensor
count when no plan is at hand. Real TFLM never sets `context_.tensors_size` (micro_interpreter.cc
at 90b983c2 leaves the TfLiteContext's tensors_size 0), so the model is the only source.

Format: FlatBuffers' binary layout (flatbuffers.dev, "FlatBuffers internals"): a table starts with
an int32 soffset back to its vtable; a vtable is uint16 vtable bytes, uint16 table bytes, then one
uint16 offset per field id (0 or past the vtable's end: the field is absent); an offset field
holds a uint32 relative to its own address; a vector is a uint32 count then its elements.
Field ids: tensorflow/compiler/mlir/lite/schema/schema.fbs (planner/schema/tflite_subset.fbs):
Model.subgraphs is id 2, SubGraph.tensors id 0. Little-endian, as TFLM requires.

`read(addr, n)` returns n bytes or raises (the caller's reader); an absurd count raises
ValueError with the count, so a smashed model_ pointer gives a bounded, clear failure."""
MODEL_SUBGRAPHS = 2    # Model.subgraphs:[SubGraph]
SUBGRAPH_TENSORS = 0   # SubGraph.tensors:[Tensor]
MAX_SUBGRAPHS = 1 << 10
MAX_TENSORS = 1 << 20


def _uint(read, addr, n, signed=False):
    return int.from_bytes(bytes(read(addr, n)), "little", signed=signed)


def field(read, table: int, field_id: int) -> int | None:
    """The address of a table's field, or None when the table does not store it."""
    vtable = table - _uint(read, table, 4, signed=True)
    entry = 4 + 2 * field_id
    if entry + 2 > _uint(read, vtable, 2):
        return None
    off = _uint(read, vtable + entry, 2)
    return table + off if off else None


def vector(read, table: int, field_id: int, limit: int) -> tuple[int, int]:
    """(address of the first element, count) of a table's vector field; (0, 0) when absent."""
    at = field(read, table, field_id)
    if at is None:
        return 0, 0
    vec = at + _uint(read, at, 4)
    count = _uint(read, vec, 4)
    if count > limit:
        raise ValueError(f"a vector of {count} elements (more than {limit}) at {vec:#x}: not a model")
    return vec + 4, count


def tensor_counts(read, model_table: int) -> list[int]:
    """The tensor count of each subgraph of the model whose root table is at model_table."""
    first, n = vector(read, model_table, MODEL_SUBGRAPHS, MAX_SUBGRAPHS)
    counts = []
    for i in range(n):
        slot = first + 4 * i
        counts.append(vector(read, slot + _uint(read, slot, 4), SUBGRAPH_TENSORS, MAX_TENSORS)[1])
    return counts
