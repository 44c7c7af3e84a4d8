"""`arenascope-plan --target riscv32` against REAL TFLM 90b983c2 built for rv32imac (issue 36).

The figures below were measured on 2026-12-06 by hand, outside the project (docs/integrating-
tflm.md, "RISC-V and Xtensa: the arena's ABI"): the library with every reference kernel, run on
`qemu-system-riscv32 -M virt`; `arena_used_bytes()` after AllocateTensors with a 4 MiB arena, and
the smallest arena for which AllocateTensors and one Invoke succeed (bisection), with the first
line TFLM printed 4 B below it. They are the oracle; the planner does not see them. The models are
../shared/models (skipped without them, or without the planner built)."""
import json

import pytest

from conftest import SHARED
from prediction import NOT_BUILT, PLANNER, run_planner

# model: (arena_used_bytes, minimum arena, TFLM's first line 4 B below the minimum)
RV32 = {
    "mlperf_tiny_ad01_int8": (2380, 2808, "Too many buffers (max is 10)"),
    "mlperf_tiny_kws_ref_model": (22780, 22780, "Failed to allocate tail memory. Requested: 12, available 8, "
                                                "missing: 4"),
    "mlperf_tiny_pretrainedResnet_quant": (54364, 54360, "Failed to allocate tail memory. Requested: 12, "
                                                         "available 8, missing: 4"),
    "tflm_audio_preprocessor_int8": (8488, 8492, "Failed to allocate tail memory. Requested: 40, available 32, "
                                                 "missing: 8"),
    "tflm_hello_world_float": (776, 1100, "Too many buffers (max is 3)"),
    "tflm_hello_world_int8": (716, 1100, "Too many buffers (max is 3)"),
    "tflm_keyword_scrambled_8bit": (8140, 10468, "Too many buffers (max is 29)"),
    "tflm_micro_speech_quantized": (6812, 6808, "Failed to allocate tail memory. Requested: 12, available 8, "
                                                "missing: 4"),
    "tflm_trained_lstm_int8": (3228, 3232, "Failed to allocate tail memory. Requested: 12, available 8, "
                                           "missing: 4"),
}


@pytest.mark.parametrize("name", sorted(RV32))
def test_the_rv32_arena_is_real_tflms_to_the_byte(name):
    model = SHARED / "models" / f"{name}.tflite"
    if not model.exists():
        pytest.skip(f"{model} is not here (../shared/models is optional)")
    if not PLANNER.exists():
        pytest.skip(NOT_BUILT)
    used, minimum, below = RV32[name]
    arena = json.loads(run_planner("--json", "--target", "riscv32", model)[1])["arena"]
    assert (arena["arena_used_bytes"], arena["minimum_bytes"], arena["exact"]) == (used, minimum, True)
    status, text = run_planner("--target", "riscv32", "--arena-size", minimum - 4, model)
    assert below in text, text
    # Arm's figures differ (TfLiteTensor 32 B there): the riscv32 answer is not Arm's by accident.
    arm = json.loads(run_planner("--json", "--target", "cortex-m", model)[1])["arena"]
    assert arm["arena_used_bytes"] < used
