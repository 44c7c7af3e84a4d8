"""GDB pretty-printers for TFLM's types (collection "arenascope", registered globally: any ELF):
TfLiteTensor, TfLiteEvalTensor, TfLiteIntArray, TfLiteFloatArray, TfLiteAffineQuantization and
tflite::MicroInterpreter. Each shows a one-line summary (type int8, dims [1, 49, 10, 1], bytes,
the data's arena offset and owner, quantization; the interpreter's arena, used bytes, tensors and
AllocateTensors state) and children (the fields, the arrays' elements) for `set print pretty` and
MI variable views (VS Code, CubeIDE). Field names: tensorflow/lite/core/c/common.h (TFLM
90b983c2, TF_LITE_STATIC_MEMORY's small TfLiteTensor) and micro_interpreter.h; a field the
firmware's TFLM lacks is left out, others are shown raw.

They never raise and never write the target: a smashed object shows "<unreadable at 0x...>" or
"<corrupt: dims->size 123456>" in place of the field, and arrays show at most
decode.tflmvalue.SHOWN elements. The owner comes from the arena the `arena` commands show
(stopcache: one gather a stop); the rules from decode.tflmvalue and analyse.figures.owner_brief.
`disable pretty-printer global arenascope[;NAME]` turns them off."""
import gdb  # pylint: disable=import-error
import gdb.printing  # pylint: disable=import-error

from arenascope_plugin.acquire.gdbtarget import GdbSymbols
from arenascope_plugin.acquire.reader import MemoryReadError
from arenascope_plugin.analyse import agentless, diagnosis, figures
from arenascope_plugin.decode import tflmstate
from arenascope_plugin.decode import tflmvalue as tv
from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.gdb import framework, stopcache, tensorindex

COLLECTION = "arenascope"


def _fields(val):
    return {f.name for f in val.type.strip_typedefs().fields() if f.name}


def _addr_of(val):
    return None if val.address is None else int(val.address)


def _where(val):
    a = _addr_of(val)
    return "" if a is None else f" at {a:#x}"


def _symbolic(addr):
    """GDB's own "0x123c8 <demo_model_data+43000>" for an address."""
    try:
        return gdb.Value(addr).cast(gdb.lookup_type("void").pointer()).format_string(symbols=True)
    except gdb.error:
        return f"{addr:#x}"


class Shown:
    """An array read: its elements (Python values), their gdb.Values for children, or why not."""

    def __init__(self, values=(), children=(), total=0, problem=None):
        self.values, self.children, self.total, self.problem = list(values), list(children), total, problem


def _no_memory():
    """Why the target's memory is not read now (None when it is): with no process (not connected,
    or the link lost) GDB reads an address from the ELF file's sections, whose .bss and arena are
    zeros, not the RAM: a pointer read there would be shown as null."""
    if gdb.selected_inferior().pid == 0:
        return "<not read: no target (GDB would give the ELF file's bytes, not the RAM)>"
    return None


def read_array(arr, what, shown=tv.SHOWN):
    """A TfLiteIntArray / TfLiteFloatArray value: its first `shown` elements, bounded, checked."""
    try:
        size = int(arr["size"])
    except gdb.error:
        return Shown(problem=tv.unreadable(_addr_of(arr) or 0))
    problem = tv.size_problem(size, what)
    if problem:
        return Shown(total=size, problem=problem)
    data = arr["data"]
    elem = data.type.strip_typedefs().target()
    n = min(size, shown)
    if data.address is None:  # a copy in a convenience variable: its elements are not in it
        return Shown(total=size, problem="<elements not in target memory (a copy)>") if n else Shown(total=size)
    start = int(data.address)
    unread = _no_memory() if n else None
    if unread:
        return Shown(total=size, problem=unread)
    try:
        if n:
            gdb.selected_inferior().read_memory(start, n * elem.sizeof)
    except gdb.error:
        return Shown(total=size, problem=tv.unreadable(start))
    ptr = data.address.cast(elem.pointer())
    kids = [(ptr + i).dereference() for i in range(n)]
    conv = float if elem.code == gdb.TYPE_CODE_FLT else int
    return Shown(values=[conv(k) for k in kids], children=kids, total=size)


def _deref(ptr, what):
    """(*ptr, None) when ptr is non-null and its target readable, else (None, why)."""
    p, unread = int(ptr), _no_memory()
    if unread:
        return None, unread
    if p == 0:
        return None, f"<null {what}>"
    target = ptr.dereference()
    try:
        gdb.selected_inferior().read_memory(p, max(1, min(target.type.sizeof, 64)))
    except gdb.error:
        return None, tv.unreadable(p)
    return target, None


def _num(x):
    return f"{x:.6g}" if isinstance(x, float) else str(x)


def quant_text(q):
    """A TfLiteAffineQuantization's summary: "scale 0.02 zero_point -128" (one channel), or the
    channel count, quantized_dimension and the first few of each."""
    scale_ptr, zp_ptr = q["scale"], q["zero_point"]
    s_val, s_why = _deref(scale_ptr, "scale")
    z_val, z_why = _deref(zp_ptr, "zero_point")
    scale = read_array(s_val, "scale", tv.QUANT_SHOWN) if s_val is not None else Shown(problem=s_why)
    zero = read_array(z_val, "zero_point", tv.QUANT_SHOWN) if z_val is not None else Shown(problem=z_why)
    s_text = scale.problem or (_num(scale.values[0]) if scale.total == 1 else
                               tv.listed(scale.values, scale.total, tv.QUANT_SHOWN, _num))
    z_text = zero.problem or (str(zero.values[0]) if zero.total == 1 else
                              tv.listed(zero.values, zero.total, tv.QUANT_SHOWN))
    if scale.problem is None and scale.total > 1:
        try:
            dim = int(q["quantized_dimension"])
        except gdb.error:
            dim = "?"
        return f"{scale.total} channels (quantized_dimension {dim}): scale {s_text} zero_point {z_text}"
    return f"scale {s_text} zero_point {z_text}"


def _owner(data, nbytes, val=None):
    """(text for the summary, arena offset or None, the owner's line, bytes from there to the
    arena's end or None) for a data pointer (of the
    tensor object val, whose model index picks the owner when it is known: gdb/tensorindex.py)."""
    ctx, why = stopcache.context()
    if ctx is None or ctx.desc is None:
        return _symbolic(data), None, f"unknown: {why or 'no arena found'}", None
    index = tensorindex.index_of(val, ctx) if val is not None else None
    brief = figures.owner_brief(ctx.desc, data, nbytes, tensor=index)
    if brief is None:
        return _symbolic(data), None, "outside every arena", None
    what = _overwritten(ctx, data)
    brief += f" ({what.replace('this object lies in ', '')}: `arena fault`)" if what else ""
    found = figures.place(ctx.desc, data)[0]
    return f"{data:#x} = {brief}", found[1], brief, found[0].size - found[1]


def _overwritten(ctx, addr, size=1):
    """The mark for what in [addr, addr + size) the stop's post-mortem found overwritten, or where
    the stack ran over it (analyse/diagnosis: `arena fault`'s findings), or None; computed once a
    stop (stopcache)."""
    if ctx is None or addr is None or _BUSY_DIAGNOSIS:
        return None
    _BUSY_DIAGNOSIS.append(True)
    try:
        found = [(what, why) for at, n, what, why in diagnosis.diagnose(ctx).overwritten
                 if at < addr + size and addr < at + n]
    except (gdb.error, ArenascopeError, ValueError, KeyError, TypeError, AttributeError):
        return None
    finally:
        _BUSY_DIAGNOSIS.clear()
    if not found:
        return None
    what, why = found[0]
    return f"OVERWRITTEN: this object lies in {what}" if not why.startswith(diagnosis.STACK_RAN) else \
        f"WHERE THE STACK RAN: this object lies in {what}, in the range the stack ran over"


_BUSY_DIAGNOSIS = []  # a printer asked while the post-mortem reads (GDB formats values it reads)


class _Safe:
    """to_string / children that never raise: a failure becomes the field's text."""

    def to_string(self):
        try:
            return self.summary()
        except (gdb.error, MemoryReadError, RuntimeError, ValueError, OverflowError) as exc:
            return f"<unreadable{_where(self.val)}: {exc}>"

    def children(self):
        try:
            return iter(list(self.kids()))
        except (gdb.error, MemoryReadError, RuntimeError, ValueError, OverflowError) as exc:
            return iter([("error", f"<unreadable{_where(self.val)}: {exc}>")])

    _facts = None

    def facts(self):
        """What gather() read from the target, read once per printer (summary and children share it)."""
        if self._facts is None:
            self._facts = self.gather()
        return self._facts

    def raw(self, skip):
        """The struct's other fields as they are (bases and unnamed members left out)."""
        for f in self.val.type.strip_typedefs().fields():
            if f.name and not f.is_base_class and f.name not in skip:
                yield f.name, self.val[f.name]


class ArrayPrinter(_Safe):
    """TfLiteIntArray / TfLiteFloatArray: "size 4" and the elements as children (an array)."""

    def __init__(self, val):
        self.val = val
        self.kind = val.type.strip_typedefs().tag or "array"

    def display_hint(self):
        return "array"

    def summary(self):
        got = read_array(self.val, "")
        if got.problem:
            return got.problem
        more = f" (first {tv.SHOWN} shown)" if got.total > tv.SHOWN else ""
        return f"size {got.total}{more}"

    def kids(self):
        got = read_array(self.val, "")
        return [(f"[{i}]", v) for i, v in enumerate(got.children)]


class TensorPrinter(_Safe):
    """TfLiteTensor and TfLiteEvalTensor: "int8 [1, 49, 10, 1] 490 B, data 0x2000ea80 = arena 0
    +8000: input_mfcc (tensor 0, head (planned), lifetime 0..1), scale 0.02 zero_point -128"."""

    def __init__(self, val):
        self.val = val

    def gather(self):
        v, have = self.val, _fields(self.val)
        tname = tv.type_name(str(v["type"])) if "type" in have else "?"
        dims_val, dims_why = _deref(v["dims"], "dims") if "dims" in have else (None, "<no dims>")
        dims = read_array(dims_val, "dims") if dims_val is not None else Shown(problem=dims_why)
        if "bytes" in have:
            nbytes = int(v["bytes"])
        else:  # TfLiteEvalTensor: TfLiteEvalTensorByteLength's rule
            whole = dims.problem is None and dims.total <= tv.SHOWN
            nbytes = tv.element_bytes(tname, dims.values) if whole else None
        data = int(v["data"]["data"]) if "data" in have else None
        owner = _owner(data, nbytes, v) if data else (f"{data:#x}" if data is not None else "?", None, "no data", None)
        if "bytes" in have:  # a mark in place of a count TFLM could not have set
            whole = dims.problem is None and dims.total <= tv.SHOWN
            nbytes = ((tv.bytes_problem(nbytes, tname, dims.values) if whole else None)
                      or tv.room_problem(nbytes, owner[3]) or nbytes)
        return tname, dims_val, dims, nbytes, data, owner

    def quant(self):
        have = _fields(self.val)
        if "quantization" not in have:
            return None, None
        q = self.val["quantization"]
        if str(q["type"]) != "kTfLiteAffineQuantization":
            return None, None
        params = q["params"]
        try:
            affine_ptr = params.cast(gdb.lookup_type("TfLiteAffineQuantization").pointer())
        except gdb.error:
            return None, None
        affine, why = _deref(affine_ptr, "quantization.params")
        return affine, (why or quant_text(affine))

    def summary(self):
        tname, _, dims, nbytes, _, owner = self.facts()
        size = "" if nbytes is None else f" {nbytes}" if isinstance(nbytes, str) else f" {nbytes} B"
        text = f"{tname} {dims.problem or tv.listed(dims.values, dims.total)}{size}, data {owner[0]}"
        ctx, _ = stopcache.context()
        here = int(self.val.address) if ctx is not None and self.val.address is not None else None
        what = _overwritten(ctx, here, self.val.type.sizeof) if here is not None else None
        if what:  # the tensor object itself overlaps overwritten memory: its fields may be the writer's
            text = f"<{what}: `arena fault`> " + text
        _, qtext = self.quant()
        return text + (f", {qtext}" if qtext else "")

    def kids(self):
        tname, dims_val, dims, nbytes, data, owner = self.facts()
        out = [("type", tname), ("dims", dims_val if dims.problem is None else dims.problem)]
        have = _fields(self.val)
        if "bytes" not in have or isinstance(nbytes, str):
            out.append(("bytes", "?" if nbytes is None else nbytes))
        out += [("data", self.val["data"]["data"]), ("arena_offset", "-" if owner[1] is None else owner[1]),
                ("owner", owner[2])]
        affine, qtext = self.quant()
        if qtext:
            out.append(("quantization", affine if affine is not None else qtext))
        for name, check in (("allocation_type", tv.enum_problem), ("is_variable", tv.bool_problem)):
            problem = check(str(self.val[name]), name) if name in have else None
            if problem:
                out.append((name, problem))
        shown = {name for name, _ in out}
        return out + list(self.raw({"type", "dims", "data", "quantization"} | shown))


class AffinePrinter(_Safe):
    """TfLiteAffineQuantization: its scales and zero points (the first few, and the count)."""

    def __init__(self, val):
        self.val = val

    def summary(self):
        return quant_text(self.val)

    def kids(self):
        out = []
        for name in ("scale", "zero_point"):
            target, why = _deref(self.val[name], name)
            out.append((name, target if target is not None else why))
        return out + list(self.raw({"scale", "zero_point"}))


class InterpreterPrinter(_Safe):
    """tflite::MicroInterpreter: TFLM's state as the plugin decodes it (agentless), its arena's
    base and size, used bytes, tensor count; then its fields."""

    def __init__(self, val):
        self.val = val

    def gather(self):
        addr = _addr_of(self.val)
        if addr is None:
            return {"state": "not in target memory"}
        ctx, _ = stopcache.context()
        shown = ctx is not None and ctx.tflm is not None and ctx.tflm.interpreter == addr
        try:
            st = ctx.tflm if shown else agentless.state_at(framework.reader(), GdbSymbols(), addr)
        except ArenascopeError as exc:
            return {"state": f"unknown ({exc})"}
        out = {"state": f"{st.condition} ({tflmstate.CONDITIONS[st.condition]})"}
        if st.arena_base is not None:
            out["arena_base"], out["arena_size"] = st.arena_base, st.arena_size
        if shown and ctx.desc is not None and ctx.figs:
            out["used_bytes"] = sum(f.used for f in ctx.figs.values())
        elif st.allocator:
            a, base = st.allocator, st.allocator["buffer_head_"]
            out["used_bytes"] = figures.used_bytes(a["head_"] - base, a.get("temp_", a["head_"]) - base,
                                                   a["tail_"] - base, a["buffer_tail_"] - base)
        if shown and ctx.plan and ctx.plan.get("subgraphs"):
            out["tensors"] = sum(len(s.get("tensors", ())) for s in ctx.plan["subgraphs"])
        else:
            count = self.model_tensors()
            if count is not None:
                out["tensors"] = count
        return out

    def model_tensors(self):
        """The context's tensors_size when set (the stand-in sets it), else None: real TFLM
        (micro_interpreter.cc at 90b983c2) leaves it 0, and the model's own count is the
        planner's to read (models are read in the planner only), so without a plan the
        printer names no count rather than a wrong one."""
        if "context_" in _fields(self.val) and int(self.val["context_"]["tensors_size"]) > 0:
            return int(self.val["context_"]["tensors_size"])
        return None

    def summary(self):
        f = self.facts()
        parts = [f["state"]]
        if "arena_base" in f:
            parts.append(f"arena {f['arena_base']:#x}, {f['arena_size']} B")
        if "used_bytes" in f:
            parts.append(f"used {f['used_bytes']} B")
        if "tensors" in f:
            parts.append(f"{f['tensors']} tensors")
        return "MicroInterpreter: " + "; ".join(parts)

    def kids(self):
        f = dict(self.facts())
        if "arena_base" in f:
            f["arena_base"] = gdb.Value(f["arena_base"]).cast(gdb.lookup_type("void").pointer())
        return list(f.items()) + list(self.raw(set()))


def build():
    pp = gdb.printing.RegexpCollectionPrettyPrinter(COLLECTION)
    pp.add_printer("TfLiteTensor", "^TfLiteTensor$", TensorPrinter)
    pp.add_printer("TfLiteEvalTensor", "^TfLiteEvalTensor$", TensorPrinter)
    pp.add_printer("TfLiteIntArray", "^TfLiteIntArray$", ArrayPrinter)
    pp.add_printer("TfLiteFloatArray", "^TfLiteFloatArray$", ArrayPrinter)
    pp.add_printer("TfLiteAffineQuantization", "^TfLiteAffineQuantization$", AffinePrinter)
    pp.add_printer("tflite::MicroInterpreter", "^tflite::MicroInterpreter$", InterpreterPrinter)
    return pp


def register():
    """Registers the collection for every ELF (GDB's global list; replaces an earlier copy)."""
    gdb.printing.register_pretty_printer(None, build(), replace=True)
