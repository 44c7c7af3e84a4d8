"""arenascope-plan with --kernels cmsis-nn against real TFLM + CMSIS-NN builds.

Oracle: the table in docs/cmsis-nn.md (figures measured on real TFLM 90b983c2 with CMSIS-NN
4ab83cc3 under QEMU: Cortex-M4, M55, M3, and the reference-kernel M4). The table must hold what
../shared/tflm-figures recorded, and the planner must equal every figure; with ../shared present
the plans' buffer lines are compared too. The models are in ../shared/models: without them the
model tests skip (a clone on its own); the usage tests always run.
"""
import json
import re
import subprocess

import pytest

from harness import BUILD, ROOT, SHARED

PLAN = BUILD / "planner" / "arenascope-plan"
MODELS = SHARED / "models"
CMSIS_FIGURES = SHARED / "tflm-figures" / "cmsisnn-figures.json"
REF_FIGURES = SHARED / "tflm-figures" / "tflm-figures.json"
BUILDS = {"cortex-m4": "arm_m4_cmsis_nn", "cortex-m55": "arm_m55_cmsis_nn", "cortex-m3": "arm_m3_cmsis_nn"}


def doc_table():
    """Rows of docs/cmsis-nn.md's figures table: (model, kernels, cpu, {head, tail, used, minimum})."""
    text = (ROOT / "docs" / "cmsis-nn.md").read_text()
    body = text.split("<!-- figures table: read by tests/integration/test_planner_cmsis_nn.py -->")[1]
    body = body.split("<!-- end of figures table -->")[0]
    rows = []
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 7 or cells[0] in ("model", "---"):
            continue
        figs = None if cells[3] == "rejected" else \
            dict(zip(("head", "tail", "used", "minimum"), map(int, cells[3:]), strict=True))
        rows.append((cells[0], cells[1], cells[2], figs))
    return rows


ROWS = doc_table()


def run(*args):
    return subprocess.run([str(PLAN), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_table_covers_every_build():
    assert len(ROWS) == 39, len(ROWS)
    assert {r[2] for r in ROWS if r[1] == "cmsis-nn"} == set(BUILDS)
    assert sum(1 for r in ROWS if r[3] is None) == 3  # the hybrid model, once per CMSIS-NN build


@pytest.mark.skipif(not CMSIS_FIGURES.exists(), reason="../shared/tflm-figures absent (clone on its own)")
def test_table_holds_the_measurements():
    cmsis = json.loads(CMSIS_FIGURES.read_text())["models"]
    ref = json.loads(REF_FIGURES.read_text())["models"]
    for model, kernels, cpu, figs in ROWS:
        rec = cmsis[model][BUILDS[cpu]] if kernels == "cmsis-nn" else ref[model]["arm_m4"]
        if figs is None:
            assert rec["error"], model
            continue
        assert figs == {"head": rec["head_bytes"], "tail": rec["tail_bytes"], "used": rec["arena_used_bytes"],
                        "minimum": rec["min_arena_bytes"]}, (model, kernels, cpu)


@pytest.mark.skipif(not MODELS.exists(), reason="../shared/models absent (clone on its own)")
@pytest.mark.parametrize("model,kernels,cpu,figs", ROWS, ids=[f"{r[0]}-{r[1]}-{r[2]}" for r in ROWS])
def test_planner_equals_real_build(model, kernels, cpu, figs):
    args = ["--json", "--kernels", kernels] + (["--cpu", cpu] if kernels == "cmsis-nn" else [])
    r = run(*args, MODELS / model)
    doc = json.loads(r.stdout)
    if figs is None:
        assert r.returncode == 1
        assert doc["tflm_rejects"][0].startswith("subgraph 0 operator 0 (CONV_2D) is hybrid"), doc["tflm_rejects"]
        return
    assert r.returncode == 0, r.stderr
    got = {"head": doc["plans"]["tflm-greedy"]["head_bytes"], "tail": doc["tail"]["bytes"],
           "used": doc["arena"]["arena_used_bytes"], "minimum": doc["arena"]["minimum_bytes"]}
    assert got == figs
    assert doc["arena"]["exact"] and not doc["approximate"]
    assert doc["kernels"]["set"] == kernels
    if kernels == "cmsis-nn":
        assert doc["kernels"]["cpu"] == cpu and doc["kernels"]["mve"] == (cpu == "cortex-m55")
    if CMSIS_FIGURES.exists() and kernels == "cmsis-nn":
        plan = json.loads(CMSIS_FIGURES.read_text())["models"][model][BUILDS[cpu]]["plan"]
        ours = [{"id": b["id"], "size": b["size"], "offset": b["offset"], "first_used": b["first"],
                 "last_used": b["last"]} for b in doc["buffers"]]
        assert ours == plan


@pytest.mark.skipif(not MODELS.exists(), reason="../shared/models absent (clone on its own)")
def test_table_and_header_name_the_kernels(tmp_path):
    model = MODELS / "tflm_keyword_scrambled_8bit.tflite"
    table = run("--kernels", "cmsis-nn", "--cpu", "m55", model).stdout
    assert "TFLM's CMSIS-NN kernels for cortex-m55 (MVE)" in table
    assert re.search(r"minimum arena +12240 ", table), table
    header = run("--header", "--kernels", "cmsis-nn", "--cpu", "cortex-m3", model).stdout
    assert '#define ARENASCOPE_PLAN_KERNELS "cmsis-nn cortex-m3"' in header
    assert "#define ARENASCOPE_PLAN_MINIMUM_ARENA_BYTES 10560u" in header
    assert '#define ARENASCOPE_PLAN_KERNELS "reference"' in run("--header", model).stdout


@pytest.mark.skipif(not MODELS.exists(), reason="../shared/models absent (clone on its own)")
def test_modifiers_take_the_path_gcc_compiles():
    """gcc 12: -mcpu=cortex-m55+nodsp defines neither __ARM_FEATURE_DSP nor __ARM_FEATURE_MVE (plain
    C, the M3's figures), cortex-m55+nomve keeps DSP (the M4's)."""
    name = "tflm_keyword_scrambled_8bit.tflite"
    want = {c: f for m, k, c, f in ROWS if m == name and k == "cmsis-nn"}
    for cpu, measured in (("cortex-m55+nodsp", "cortex-m3"), ("cortex-m55+nomve", "cortex-m4"),
                          ("cortex-m33+nodsp", "cortex-m3"), ("cortex-m7+nofp.dp", "cortex-m4")):
        doc = json.loads(run("--json", "--kernels", "cmsis-nn", "--cpu", cpu, MODELS / name).stdout)
        assert doc["arena"]["minimum_bytes"] == want[measured]["minimum"], cpu
    r = run("--kernels", "cmsis-nn", "--cpu", "cortex-m4+nomve", MODELS / name)
    assert r.returncode == 2 and "'+nomve' in 'cortex-m4+nomve' is not a modifier gcc takes for cortex-m4" in r.stderr


@pytest.mark.parametrize("args,needle", [
    (["--kernels", "xtensa"], "unknown kernels 'xtensa': use reference or cmsis-nn"),
    (["MODEL", "--kernels"], "--kernels needs reference or cmsis-nn"),
    (["--kernels", "cmsis-nn", "--cpu"], "--cpu needs a CPU such as cortex-m4 before the model (got '"),
    (["--kernels", "cmsis-nn", "--cpu", "cortex-a53"], "unknown CPU 'cortex-a53'"),
    (["--cpu", "cortex-m4"], "--cpu goes with --kernels cmsis-nn"),
    (["--kernels", "cmsis-nn", "--target", "host"], "--kernels cmsis-nn goes with --target cortex-m"),
])
def test_usage_errors(tmp_path, args, needle):
    model = tmp_path / "m.tflite"
    model.write_bytes(b"")
    r = run(*[model if a == "MODEL" else a for a in args]) if "MODEL" in args else run(*args, model)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr


@pytest.mark.skipif(not MODELS.exists(), reason="../shared/models absent (clone on its own)")
def test_gdb_arena_plan_model_with_cmsis_nn(tmp_path):
    """`arena plan --model FILE --kernels cmsis-nn --cpu CPU` in real GDB, no target: the words
    give the measured M55 figures of the table; bad values are refused with what to give."""
    name = "tflm_keyword_scrambled_8bit.tflite"
    m55 = next(f for m, k, c, f in ROWS if m == name and k == "cmsis-nn" and c == "cortex-m55")
    r = subprocess.run(["gdb-multiarch", "-batch", "-nx", "-ex", f"source {ROOT / 'gdbplugin' / 'arenascope.py'}",
                        "-ex", f"set arena planner-path {PLAN}", "-ex", "set style enabled off",
                        "-ex", f"arena plan --model {MODELS / name} --kernels cmsis-nn --cpu cortex-m55",
                        "-ex", f"arena plan --model {MODELS / name} --kernels cmsis-nn --cpu cortex-a9",
                        "-ex", "set arena kernels xtensa", "-ex", "set arena cpu m55+mve",
                        "-ex", "set arena kernels cmsis-nn", "-ex", "set arena cpu m3",
                        "-ex", f"arena plan --model {MODELS / name}",
                        "-ex", "arena plan --cpu cortex-m4",
                        "-ex", f"arena plan --model {MODELS / name} --kernels cmsis-nn --target host",
                        "-ex", "set arena kernels reference",
                        "-ex", f"arena plan --model {MODELS / name} --cpu cortex-m55"],
                       capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    assert "TFLM's CMSIS-NN kernels for cortex-m55 (--kernels, --cpu)" in out, out
    assert (f"arena (cortex-m, CMSIS-NN kernels for cortex-m55): arena_used_bytes() {m55['used']} B after "
            f"AllocateTensors; minimum arena {m55['minimum']} B") in out, out
    assert "'cortex-a9': use auto or one of cortex-m0" in out
    assert "set arena kernels: 'xtensa': use auto, reference or cmsis-nn; kept 'auto'" in out
    assert "set arena cpu: 'm55+mve': use auto or one of" in out
    m3 = next(f for m, k, c, f in ROWS if m == name and k == "cmsis-nn" and c == "cortex-m3")
    assert "TFLM's CMSIS-NN kernels for cortex-m3 (set arena kernels, set arena cpu)" in out, out
    assert f"minimum arena {m3['minimum']} B" in out
    assert "--target, --margin, --kernels, --cpu and --tflm go with --model FILE.tflite" in out
    assert "arena plan: --kernels cmsis-nn goes with --target cortex-m" in out  # the tool's usage error, as it is
    assert "--cpu goes with --kernels cmsis-nn (set arena kernels: reference kernels" in out
    assert "Traceback" not in out and "internal error" not in out
