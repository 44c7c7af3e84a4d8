"""Which model tensor a TfLiteTensor / TfLiteEvalTensor value is, for the pretty-printers'
owner line: the head is an overlay, so a data pointer alone often fits several regions of the
same size (real TFLM's hello_world: input and a hidden layer both at +16); the tensor's index
names the one. Only for the interpreter the `arena` commands show (agentless; its plan gives
subgraph 0's inputs and outputs), read-only, None when unknown:

- a TfLiteEvalTensor inside graph_.subgraph_allocations_[0].tensors: its position there
  (micro_allocator.cc AllocateTfLiteEvalTensors fills tensors[i] from the model's tensor i);
- a TfLiteTensor that is input_tensors_[i] / output_tensors_[i]: subgraph 0's inputs[i] /
  outputs[i] (micro_interpreter.cc AllocateTensors: AllocatePersistentTfLiteTensor(...,
  inputs().Get(i), 0); MicroInterpreter::input(i) returns it).
Member names: micro_interpreter.h, micro_interpreter_graph.h, micro_allocator.h (TFLM 90b983c2)."""
import gdb  # pylint: disable=import-error


def _interpreter(ctx):
    if ctx is None or ctx.tflm is None or not ctx.tflm.interpreter or not ctx.plan or not ctx.plan.get("subgraphs"):
        return None
    return gdb.parse_and_eval(f"*(tflite::MicroInterpreter *) {ctx.tflm.interpreter:#x}")


def _listed(interp, member, addr, count):
    """i when interp.member[i] == addr for some i < count, else None."""
    arr = interp[member]
    if int(arr) == 0:
        return None
    return next((i for i in range(count) if int(arr[i]) == addr), None)


def index_of(val, ctx):
    """The model tensor index (subgraph 0) of the tensor object `val` (a gdb.Value in target
    memory) of ctx's interpreter, or None."""
    try:
        interp = _interpreter(ctx)
        if interp is None or val.address is None:
            return None
        addr, sub = int(val.address), ctx.plan["subgraphs"][0]
        if val.type.strip_typedefs().tag == "TfLiteEvalTensor":
            allocs = interp["graph_"]["subgraph_allocations_"]
            base = int(allocs["tensors"]) if int(allocs) else 0
            size = val.type.strip_typedefs().sizeof
            i, rest = divmod(addr - base, size)
            return i if base and rest == 0 and 0 <= i < len(sub["tensors"]) else None
        for member, listed in (("input_tensors_", sub["inputs"]), ("output_tensors_", sub["outputs"])):
            i = _listed(interp, member, addr, len(listed))
            if i is not None:
                return listed[i]
    except (gdb.error, KeyError, IndexError, TypeError, ValueError):
        return None
    return None
