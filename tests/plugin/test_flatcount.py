"""decode/flatcount.py on real models (../shared/models; skipped without them): each subgraph's
tensor count equals what Debian's flatc decodes from the same file with the planner's schema
(planner/schema/tflite_subset.fbs), an independent reader; a smashed vector count is refused."""
import json
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from arenascope_plugin.decode import flatcount
from conftest import ROOT, SHARED

MODELS = sorted((SHARED / "models").glob("*.tflite")) if (SHARED / "models").is_dir() else []
SCHEMA = ROOT / "planner" / "schema" / "tflite_subset.fbs"


def reader(data):
    def read(addr, n):
        if addr < 0 or addr + n > len(data):
            raise ValueError(f"outside the file: {addr:#x}+{n}")
        return data[addr:addr + n]
    return read


def flatc_counts(model):
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["flatc", "--json", "--raw-binary", "--strict-json", "-o", tmp, str(SCHEMA), "--",
                        str(model)], check=True, capture_output=True, timeout=60)
        doc = json.loads(next(pathlib.Path(tmp).glob("*.json")).read_text())
    return [len(s.get("tensors", [])) for s in doc["subgraphs"]]


@pytest.mark.skipif(not MODELS or shutil.which("flatc") is None,
                    reason="no ../shared/models or no flatc (flatbuffers-compiler)")
@pytest.mark.parametrize("model", MODELS, ids=lambda p: p.name)
def test_tensor_counts_equal_flatcs(model):
    data = model.read_bytes()
    root = int.from_bytes(data[:4], "little")  # the root table GetModel returns: MicroInterpreter::model_
    assert flatcount.tensor_counts(reader(data), root) == flatc_counts(model)


def test_a_smashed_count_is_refused():
    # a vtable at 0 (12 B; table 8 B; field 2, Model.subgraphs, at +4), the root table at 16 (its
    # soffset back to the vtable: 16), its subgraphs offset 8 -> a vector at 28 counting 0xFFFFFFFF
    data = bytearray(64)
    data[0:2], data[2:4], data[8:10] = (12).to_bytes(2, "little"), (8).to_bytes(2, "little"), (4).to_bytes(2, "little")
    data[16:20], data[20:24], data[28:32] = (16).to_bytes(4, "little"), (8).to_bytes(4, "little"), b"\xff" * 4
    with pytest.raises(ValueError, match="4294967295 elements"):
        flatcount.tensor_counts(reader(bytes(data)), 16)
