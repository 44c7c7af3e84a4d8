"""`arena plan`, `arena map`, `arena regions` and `arena snapshot` on firmware running a model
with and without the better plan written in (arenascope-plan --write-offline-plan).

The firmware is the TFLM STAND-IN (examples/tflm_standin/, NOT TensorFlow Lite Micro: TFLM's type
layouts, its arena laid out by re-enacting the planner's steps), built here for
tests/planner/greedy_loses.h's model and for the same model written with its best plan, on QEMU
mps2-an386 under gdb-multiarch, agentless. Figures from greedy_loses.h (worked by hand): TFLM's
head 3840 B, the lower bound and best plan 3072 B, seven activations.
"""
import json
import pathlib
import re
import shutil
import subprocess

import pytest

from harness import BUILD, PLANNER, ROOT, gdb_batch, qemu

WRITE = BUILD / "tests" / "planner" / "arenascope-write-test-model"
PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
pytestmark = pytest.mark.skipif(not PLANNER.exists() or not WRITE.exists() or not shutil.which("arm-none-eabi-gcc"),
                                reason="planner or the arm-none-eabi toolchain missing (bash tools/build.sh)")


def standin(tmp, name, model):
    """The stand-in firmware for `model`, built as the top-level build builds the demo's."""
    plan_dir, build = tmp / name / "plan", tmp / name / "build"
    plan_dir.mkdir(parents=True)
    (plan_dir / "plan.json").write_text(subprocess.run([str(PLANNER), "--json", "--target", "cortex-m", str(model)],
                                                       capture_output=True, text=True, check=True).stdout)
    subprocess.run(["/usr/bin/python3", str(ROOT / "examples" / "tflm_standin" / "gen_standin_plan.py"),
                    str(plan_dir / "plan.json"), str(model), str(plan_dir / "standin_plan.h")], check=True)
    subprocess.run(["cmake", f"-DIN={model}", f"-DOUT={tmp / name / 'model.c'}", "-P",
                    str(ROOT / "cmake" / "embed_model.cmake")], check=True)
    subprocess.run(["cmake", "-S", str(ROOT / "examples" / "tflm_standin"), "-B", str(build),
                    f"-DCMAKE_TOOLCHAIN_FILE={ROOT / 'cmake' / 'arm-none-eabi.cmake'}",
                    "-DCMAKE_BUILD_TYPE=MinSizeRel", f"-DSTANDIN_PLAN_DIR={plan_dir}",
                    f"-DMODEL_DATA_C={tmp / name / 'model.c'}"], check=True, capture_output=True, timeout=300)
    subprocess.run(["cmake", "--build", str(build), "--target", "tflm_standin_fw.elf"], check=True,
                   capture_output=True, timeout=600)
    return build / "tflm_standin_fw.elf"


def session(elf, tmp):
    with qemu(elf) as (port, _uart):
        cmds = ["set pagination off", "set confirm off", "break inference_done", "continue",
                f"source {PLUGIN}", f"set arena planner-path {PLANNER}", "set arena colour off",
                "echo =plan=\\n", "arena plan", "echo =map=\\n", "arena map", "echo =end=\\n",
                f"arena snapshot {tmp / 'snap.json'}"]
        _dump, text = gdb_batch(elf, cmds, remote_port=port, timeout=120)
    plan_text = text.split("=plan=")[1].split("=map=")[0]
    map_text = text.split("=map=")[1].split("=end=")[0]
    return plan_text, map_text, json.loads((tmp / "snap.json").read_text())


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("offline-gdb")
    original, written = tmp / "greedy_loses.tflite", tmp / "greedy_loses_offline.tflite"
    subprocess.run([str(WRITE), "greedy-loses", str(original)], check=True)
    subprocess.run([str(PLANNER), "--write-offline-plan", str(written), str(original)], check=True,
                   capture_output=True)
    return tmp, original, written


def planned(snap):
    return [r for r in snap["arenas"][0]["regions"] if r["kind"] == "tensor"]


def test_the_saving_is_offered_on_the_target(models):
    tmp, original, _ = models
    elf = standin(tmp, "original", original)
    plan_text, map_text, snap = session(elf, tmp / "original")
    assert "planned head 3840 B" in plan_text
    assert ("this model's head can be 768 B smaller: TFLM's greedy plan takes 3840 B, the best plan found "
            "3072 B (the lower bound); the minimum arena 4736 -> 3968 B: write it into the model with "
            "`arenascope-plan --write-offline-plan OUT.tflite MODEL.tflite`") in plan_text
    assert "offline" not in map_text
    assert len(planned(snap)) == 7 and not any("offline" in r["flags"] for r in planned(snap))


def test_offline_planned_regions_are_marked(models):
    tmp, _, written = models
    elf = standin(tmp, "written", written)
    plan_text, map_text, snap = session(elf, tmp / "written")
    assert "planned head 3072 B" in plan_text
    assert "7 region(s) placed by the model's offline plan" in plan_text
    assert "can be" not in plan_text  # nothing more to save
    assert "7 of the head's regions are placed by the model's offline plan" in map_text
    rows = [line for line in map_text.splitlines() if re.search(r" B  tensor ", line)]
    assert len(rows) == 7 and all(" offline " in line for line in rows)
    # The snapshot carries the flag for the viewer and other tools; offsets are the written plan's.
    regions = planned(snap)
    assert len(regions) == 7 and all("offline" in r["flags"] for r in regions)
    doc = json.loads(subprocess.run([str(PLANNER), "--json", str(pathlib.Path(written))], capture_output=True,
                                    text=True, check=True).stdout)
    assert sorted(r["offset"] for r in regions) == sorted(b["offset"] for b in doc["buffers"])


def test_arena_plan_model_offers_the_saving_with_no_target(models):
    tmp, original, written = models
    cmds = [f"source {PLUGIN}", f"set arena planner-path {PLANNER}", "set arena colour off",
            f"arena plan --model {original}", "echo =written=\\n", f"arena plan --model {written}"]
    _dump, text = gdb_batch(None, cmds, timeout=120)
    before, after = text.split("=written=")
    assert (f"this model's head can be 768 B smaller: TFLM's greedy plan takes 3840 B, the best plan found 3072 B "
            f"(the lower bound); the minimum arena 4736 -> 3968 B: write it into the model with "
            f"`arenascope-plan --write-offline-plan OUT.tflite {original}`") in before
    assert "7 region(s) placed by the model's offline plan" in after and "can be" not in after
