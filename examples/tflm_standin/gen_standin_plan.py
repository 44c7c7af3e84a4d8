#!/usr/bin/env python3
"""NOT TensorFlow Lite Micro. Part of the TFLM STAND-IN (examples/tflm_standin/): a firmware with
TFLM 90b983c2's class and member names for what arenascope's agentless mode reads, so that its
post-mortem is tested in CI where real TFLM cannot be built; it lays out the arena by re-enacting
the allocation steps arenascope-plan predicts.

This generator (run by the top-level CMake with Debian's /usr/bin/python3) turns
`arenascope-plan --json MODEL` and the model's bytes into standin_plan.h: the allocation steps in
TFLM's order with a role each (what the firmware constructs or points to where the step lands),
the head plan, every tensor's flatbuffer facts (its shape vector, its constant data, its
quantization, as TFLM's FlatBufferVectorToTfLiteTypeArray points into the flatbuffer) and the
minimum / recommended arena sizes.

    gen_standin_plan.py PLAN.json MODEL.tflite OUT.h
"""
import json
import struct
import sys

KINDS = ["persistent", "temp", "reset-temp", "resize-head", "planner-arrays", "reserve-head"]
PHASES = ["MicroInterpreter constructor (MicroAllocator::Create)", "AllocateTensors: StartModelAllocation",
          "AllocateTensors: parsing builtin options", "AllocateTensors: kernels' Init",
          "AllocateTensors: kernels' Prepare", "AllocateTensors: memory planning (FinishModelAllocation)",
          "AllocateTensors: input/output TfLiteTensors"]
# tflite TensorType (schema.fbs) -> TfLiteType (c/common.h)
TFLITE_TYPE = {0: 1, 1: 10, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6, 7: 7, 8: 8, 9: 9, 10: 11, 11: 12, 12: 13, 13: 14,
               14: 15, 15: 16, 16: 17, 17: 18}


class Flatbuffer:
    """Just enough of the flatbuffer wire format to find the tflite schema's vectors by offset."""

    def __init__(self, data):
        self.d = data

    def u32(self, at):
        return struct.unpack_from("<I", self.d, at)[0]

    def field(self, table, i):
        vtable = table - struct.unpack_from("<i", self.d, table)[0]
        vt_size = struct.unpack_from("<H", self.d, vtable)[0]
        if 4 + 2 * i >= vt_size:
            return None
        off = struct.unpack_from("<H", self.d, vtable + 4 + 2 * i)[0]
        return table + off if off else None

    def vector(self, table, i):
        """(offset of the vector's length word, length) or (None, 0)."""
        at = self.field(table, i)
        if at is None:
            return None, 0
        vec = at + self.u32(at)
        return vec, self.u32(vec)

    def tables(self, table, i):
        vec, n = self.vector(table, i)
        return [vec + 4 + 4 * k + self.u32(vec + 4 + 4 * k) for k in range(n)]

    def scalar(self, table, i, fmt, default):
        at = self.field(table, i)
        return struct.unpack_from("<" + fmt, self.d, at)[0] if at is not None else default


def model_facts(data):
    fb = Flatbuffer(data)
    root = fb.u32(0)
    buffers = fb.tables(root, 4)
    codes = []
    for oc in fb.tables(root, 1):
        codes.append(max(fb.scalar(oc, 0, "b", 0), fb.scalar(oc, 3, "i", 0)))
    subgraphs = []
    for sg in fb.tables(root, 2):
        tensors = []
        for t in fb.tables(sg, 0):
            shape, _ = fb.vector(t, 0)
            buf = fb.scalar(t, 2, "I", 0)
            data_at, data_len = fb.vector(buffers[buf], 0) if buf < len(buffers) else (None, 0)
            q = fb.field(t, 4)
            scale_at, zp_at, zp_count, qdim = None, None, 0, 0
            if q is not None:
                qt = q + fb.u32(q)
                scale_at, _ = fb.vector(qt, 2)
                zp_at, zp_count = fb.vector(qt, 3)
                qdim = fb.scalar(qt, 6, "i", 0)
            tensors.append({"shape": shape, "type": TFLITE_TYPE.get(fb.scalar(t, 1, "b", 0), 0),
                            "data": data_at + 4 if data_at is not None and data_len else None,
                            "scale": scale_at, "zero_points": zp_count, "zp_at": zp_at, "qdim": qdim,
                            "variable": fb.scalar(t, 5, "B", 0)})
        ops = []
        for op in fb.tables(sg, 3):
            ins, _ = fb.vector(op, 1)
            outs, _ = fb.vector(op, 2)
            ops.append({"inputs": ins, "outputs": outs, "code": codes[fb.scalar(op, 0, "I", 0)]})
        subgraphs.append({"tensors": tensors, "operators": ops})
    return subgraphs


# The stand-in's role of a persistent step, from the planner's role of it (docs/planner-schema.json
# $defs/tail_role: matched on, never the label).
PERSISTENT_ROLES = {
    "arena-allocator": "ARENA_ALLOCATOR", "memory-planner": "PLANNER", "micro-allocator": "MICRO_ALLOCATOR",
    "builtin-data-allocator": "BUILTIN_ALLOCATOR", "subgraph-allocations": "SUBGRAPH_ALLOCATIONS",
    "eval-tensors": "EVAL_TENSORS", "node-and-registration": "NODES", "builtin-data": "BUILTIN_DATA",
    "op-data": "USER_DATA", "kernel-buffer": "KERNEL_BUFFER", "scratch-handles": "SCRATCH_HANDLES",
    "variable-tensor": "VARIABLE", "input-tensor-array": "INPUT_ARRAY", "output-tensor-array": "OUTPUT_ARRAY",
    "input-tensor": "INPUT_TENSOR", "output-tensor": "OUTPUT_TENSOR", "input-quantization": "QUANTIZATION",
    "output-quantization": "QUANTIZATION", "input-zero-points": "ZERO_POINTS", "output-zero-points": "ZERO_POINTS",
}


def role(step):
    """The role of a step: what TFLM makes of the memory it returns (a persistent step's from the
    planner's role, the others' from their kind and category)."""
    cat, kind = step["category"], step["kind"]
    if kind == "persistent":
        if step.get("role") not in PERSISTENT_ROLES:
            raise SystemExit(f"gen_standin_plan.py: no role for step {step}: is the plan from this arenascope-plan?")
        return PERSISTENT_ROLES[step["role"]]
    if kind == "temp":
        if cat == "temp TfLiteTensor":
            return "TEMP_TENSOR"
        if cat == "temp TfLiteTensor quantization":
            return "TEMP_QUANTIZATION"
        if cat == "memory planning":
            return "PLANNING_TEMP"
        return "TEMP_BUFFER"
    return {"reset-temp": "NONE", "resize-head": "SCRATCH_REQUESTS", "planner-arrays": "PLANNER_ARRAYS",
            "reserve-head": "HEAD"}[kind]


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    plan_path, model_path, out_path = sys.argv[1:4]
    plan = json.load(open(plan_path))
    data = open(model_path, "rb").read()
    if plan.get("file_bytes") not in (None, len(data)):
        raise SystemExit("gen_standin_plan.py: the plan is not of this model")
    facts = model_facts(data)
    lines = ["/* Generated by examples/tflm_standin/gen_standin_plan.py from arenascope-plan --json: do not edit.",
             " * NOT TensorFlow Lite Micro: the TFLM stand-in's allocation steps (TFLM 90b983c2's order, as",
             " * arenascope-plan predicts them), head plan, model facts and arena sizes. */",
             "#pragma once", "#include \"standin_plan_types.h\"", ""]
    arena = plan["arena"]
    lines += [f"#define STANDIN_MINIMUM_BYTES {arena['minimum_bytes']}u",
              f"#define STANDIN_RECOMMENDED_BYTES {arena['recommended_bytes']}u",
              f"#define STANDIN_ARENA_USED_BYTES {arena['arena_used_bytes']}u",
              f"#define STANDIN_HEAD_BYTES {plan['plans']['tflm-greedy']['head_bytes']}u",
              f"#define STANDIN_TAIL_BYTES {plan['tail']['bytes']}u",
              f"#define STANDIN_STEP_COUNT {len(plan['steps'])}u",
              f"#define STANDIN_BUFFER_COUNT {len(plan['buffers'])}u",
              f"#define STANDIN_SUBGRAPH_COUNT {len(plan['subgraphs'])}u", ""]
    lines.append("static const standin_step_t standin_steps[STANDIN_STEP_COUNT] = {")
    for s in plan["steps"]:
        r = role(s)
        lines.append(f"  {{STANDIN_STEP_{KINDS.index(s['kind'])}_{s['kind'].upper().replace('-', '_')}, "
                     f"STANDIN_ROLE_{r}, {PHASES.index(s['phase'])}, {1 if s['fatal'] else 0}, {s['bytes']}, "
                     f"{s['align']}, {s['count']}, {s['subgraph']}, {s['operator']}, {s['tensor']}, "
                     f"{c_string(s['what'])}}},")
    lines.append("};")
    lines.append("static const standin_buffer_t standin_buffers[STANDIN_BUFFER_COUNT] = {")
    for b in plan["buffers"]:
        lines.append(f"  {{{b['subgraph']}, {b['tensor']}, {b['scratch']}, {b['offset']}, {b['size']}, "
                     f"{b['first']}, {b['last']}}},")
    lines.append("};")
    for si, (sg, fsg) in enumerate(zip(plan["subgraphs"], facts, strict=False)):
        lines.append(f"static const standin_tensor_t standin_tensors_{si}[{len(sg['tensors'])}] = {{")
        for t in sg["tensors"]:
            f = fsg["tensors"][t["index"]]
            place = {"arena": 0, "flash": 1, "persistent": 2}[t["placement"]]
            lines.append(f"  {{{place}, {f['type']}, {1 if f['variable'] else 0}, {t['bytes']}, "
                         f"{-1 if f['shape'] is None else f['shape']}, {-1 if f['data'] is None else f['data']}, "
                         f"{-1 if f['scale'] is None else f['scale']}, {f['zero_points']}, "
                         f"{-1 if f['zp_at'] is None else f['zp_at'] + 4}, {f['qdim']}}},")
        lines.append("};")
        lines.append(f"static const standin_operator_t standin_operators_{si}[{len(sg['operators'])}] = {{")
        for op in fsg["operators"]:
            lines.append(f"  {{{op['inputs']}, {op['outputs']}, {op['code']}}},")
        lines.append("};")
        for io in ("inputs", "outputs"):
            lines.append(f"static const int standin_{io}_{si}[{len(sg[io])}] = {{{', '.join(map(str, sg[io]))}}};")
    lines.append("static const standin_subgraph_t standin_subgraphs[STANDIN_SUBGRAPH_COUNT] = {")
    for si, sg in enumerate(plan["subgraphs"]):
        lines.append(f"  {{{len(sg['tensors'])}, standin_tensors_{si}, {len(sg['operators'])}, standin_operators_{si}, "
                     f"{len(sg['inputs'])}, standin_inputs_{si}, {len(sg['outputs'])}, standin_outputs_{si}}},")
    lines.append("};")
    with open(out_path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    import os
    os.replace(out_path + ".tmp", out_path)


if __name__ == "__main__":
    main()
