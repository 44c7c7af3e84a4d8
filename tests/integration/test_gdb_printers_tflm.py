"""The pretty-printers and $arena_*() functions on a REAL TFLM firmware (optional: CI has no TFLM).

Build the application by hand, outside the project, as docs/pretty-printers.md ("Checked on real
TFLM") tells, then:
  ARENASCOPE_TFLM_PRINTERS_ELF=/path/app.elf \\
  ARENASCOPE_TFLM_PRINTERS_MODEL=../shared/models/tflm_hello_world_int8.tflite ctest -R gdb_printers
(the model defaults to that file). The application's contract: TFLM with -g for QEMU mps2-an386
with semihosting, a 16-byte aligned `tensor_arena`, a function-static `interpreter` in main(),
globals `TfLiteTensor *g_input, *g_output` = interpreter.input(0) / output(0), one Invoke, then
`inference_done()`; __StackLimit/__StackTop and a 0xCC-painted stack for $arena_stack_room().
Skips cleanly without the ELF.

Expected values come from elsewhere: shapes, types, names, sizes, offsets and lifetimes from
`arenascope-plan --json MODEL`; quantization from GDB's raw print of the tensor's params and
from Debian's flatc decoding the model; the arena's address and size from the ELF's symbol table
(pyelftools) with TFLM's 16-byte AlignPointerUp; arena_used_bytes() and the minimum arena from
../shared/tflm-figures (real TFLM's own figures at 90b983c2 on the Cortex-M4); the stack's
high-water mark from the stack's bytes read here."""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from harness import PLANNER, ROOT, SHARED, TFLM_FIGURES
from test_gdb_printers import BAD, HEALTHY, raw_params, run, value

ELF = os.environ.get("ARENASCOPE_TFLM_PRINTERS_ELF")
MODEL = pathlib.Path(os.environ.get("ARENASCOPE_TFLM_PRINTERS_MODEL",
                                    SHARED / "models" / "tflm_hello_world_int8.tflite"))
INTERP = "main::interpreter"
EVAL = f"{INTERP}.graph_.subgraph_allocations_[0].tensors"
SCHEMA = ROOT / "planner" / "schema" / "tflite_subset.fbs"

pytestmark = pytest.mark.skipif(not ELF or not pathlib.Path(ELF).exists() or not MODEL.exists() or
                                not PLANNER.exists(),
                                reason="ARENASCOPE_TFLM_PRINTERS_ELF names no real TFLM build, or the model or "
                                "the planner is missing (optional test)")


@pytest.fixture(scope="module")
def plan():
    out = subprocess.run([str(PLANNER), "--json", str(MODEL)], capture_output=True, text=True, check=True,
                         timeout=120)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def syms():
    """Symbol name -> (address, size) from the ELF's own symbol table."""
    from elftools.elf.elffile import ELFFile
    with open(ELF, "rb") as f:
        table = ELFFile(f).get_section_by_name(".symtab")
        return {s.name: (s["st_value"], s["st_size"]) for s in table.iter_symbols() if s.name}


@pytest.fixture(scope="module")
def figures():
    if not TFLM_FIGURES.exists():
        pytest.skip(f"{TFLM_FIGURES} missing (real TFLM's own figures)")
    return json.loads(TFLM_FIGURES.read_text())["models"][MODEL.name]["arm_m4"]


def flatc_quant(index):
    """(scale, zero_point) of tensor `index` as flatc decodes the model, or None without flatc."""
    if shutil.which("flatc") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["flatc", "--json", "--raw-binary", "--strict-json", "-o", tmp, str(SCHEMA), "--",
                        str(MODEL)], check=True, capture_output=True, timeout=60)
        doc = json.loads(next(pathlib.Path(tmp).glob("*.json")).read_text())
    q = doc["subgraphs"][0]["tensors"][index]["quantization"]
    return q["scale"][0], q["zero_point"][0]


def arena_of(syms):
    """(TFLM's arena start, its size): tensor_arena aligned up to 16 (MicroAllocator::Create)."""
    addr, size = syms["tensor_arena"]
    base = (addr + 15) & ~15
    return base, size - (base - addr)


def line(plan, index, base):
    """The summary's start for model tensor `index`: type, shape, bytes, data, owner."""
    t = plan["subgraphs"][0]["tensors"][index]
    b = next(b for b in plan["buffers"] if b["tensor"] == index)
    return (f"{t['type'].lower()} [{', '.join(map(str, t['shape']))}] {t['bytes']} B, data {base + b['offset']:#x} = "
            f"arena 0 +{b['offset']}: {t['name']} (tensor {index}, head (planned), lifetime {b['first']}..{b['last']})")


def test_tensors_quantization_interpreter(plan, syms, figures):
    sub = plan["subgraphs"][0]
    inp, outp = sub["inputs"][0], sub["outputs"][0]
    planned = [b["tensor"] for b in plan["buffers"] if b["tensor"] >= 0]
    cmds = ["print -raw-values -- g_input->params", "print -raw-values -- g_output->params",
            "p *g_input", "p *g_output", "p *g_input->dims",
            "p *(TfLiteAffineQuantization*)g_input->quantization.params",
            f"p {INTERP}", "set print pretty on", "p *g_input", "set print pretty off",
            *[f"p {EVAL}[{i}]" for i in planned]]
    out, text, _ = run(HEALTHY, cmds, elf=ELF, semihosting=True)
    assert not BAD.search(text), text
    base, size = arena_of(syms)
    for raw, printed, index in ((out[0], out[2], inp), (out[1], out[3], outp)):
        scale, zp = raw_params(raw)
        assert value(printed).startswith(f"{line(plan, index, base)}, scale {float(scale):.6g} zero_point {zp} = "
                                         "{type = int8, dims = size "), printed
        from_model = flatc_quant(index)
        if from_model is not None:  # the model's own figures (flatc prints floats with 6 decimals)
            assert abs(float(scale) - from_model[0]) <= 5e-7 and zp == from_model[1]
    shape = sub["tensors"][inp]["shape"]
    assert value(out[4]) == f"size {len(shape)} = {{{', '.join(map(str, shape))}}}"
    scale, zp = raw_params(out[0])
    assert value(out[5]) == (f"scale {float(scale):.6g} zero_point {zp} = {{scale = size 1 = {{{scale}}}, "
                             f"zero_point = size 1 = {{{zp}}}, quantized_dimension = 0}}")
    assert value(out[6]).startswith(
        "MicroInterpreter: allocated (AllocateTensors succeeded and TFLM's allocator objects are sound); "
        f"arena {base:#x}, {size} B; used {figures['arena_used_bytes']} B; {len(sub['tensors'])} tensors = "
        "{state = allocated"), out[6]
    b = next(b for b in plan["buffers"] if b["tensor"] == inp)
    pretty = out[8]
    assert f"\n  arena_offset = {b['offset']},\n" in pretty and f"\n  dims = size {len(shape)} = {{" in pretty, pretty
    # every planned tensor's TfLiteEvalTensor names its own region (the index picks among overlays)
    for n, i in enumerate(planned):
        assert value(out[10 + n]).startswith(line(plan, i, base) + " = {type = int8, dims = "), out[10 + n]


def test_functions_against_figures_and_memory(plan, syms, figures):
    base, size = arena_of(syms)
    low, high = syms["__StackLimit"][0], syms["__StackTop"][0]
    cmds = ["p $arena_free()", "p $arena_headroom()", "p $arena_stack_room()", "p $arena_owner(g_input->data.raw)",
            "arena whereis g_input->data.raw", "print -raw-values -- (unsigned int) g_input->data.raw"]
    out, text, dump = run(HEALTHY, ["set print elements 0", *cmds], reads=[("stack", f"{low:#x}", high - low)],
                          elf=ELF, semihosting=True)
    assert not BAD.search(text), text
    assert int(value(out["p $arena_free()"])) == size - figures["arena_used_bytes"]
    assert int(value(out["p $arena_headroom()"])) == size - figures["min_arena_bytes"]
    mem = bytes.fromhex(dump["mem"]["stack"])
    hwm = low + next(i for i in range(0, len(mem), 4) if mem[i:i + 4] != b"\xcc" * 4)
    assert int(value(out["p $arena_stack_room()"])) == hwm - (base + size)
    inp = plan["subgraphs"][0]["inputs"][0]
    offset = next(b["offset"] for b in plan["buffers"] if b["tensor"] == inp)
    assert int(value(out[6])) == base + offset
    lines = out["arena whereis g_input->data.raw"].splitlines()
    assert lines[0] == f"{base + offset:#x} is in arena 0 at +{offset} (head (planned))"
    assert value(out[4]) == '"' + "; ".join(x.strip() for x in lines) + '"'


def test_interpreter_count_without_a_plan(plan):
    """Without a plan no tensor count is claimed: real TFLM leaves context_.tensors_size 0, and
    the model's count is the planner's to read (a "0 tensors" here would be wrong)."""
    out, text, _ = run(HEALTHY, ["set arena planner-path /bin/false", f"p {INTERP}"], elf=ELF, semihosting=True)
    assert not BAD.search(text), text
    assert out[f"p {INTERP}"].startswith("$1 = MicroInterpreter: "), out[f"p {INTERP}"]
    assert " tensors" not in out[f"p {INTERP}"].split(" = {")[0], out[f"p {INTERP}"]
