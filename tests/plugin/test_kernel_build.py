"""decode/kernels.py: the firmware's TFLM kernels and CMSIS-NN's CPU, read from the ELF.

The CPU is read from real objects compiled here with arm-none-eabi-gcc for each -mcpu, and the
answer is checked against what the same compiler defines for that -mcpu (__ARM_FEATURE_DSP,
__ARM_FEATURE_MVE: what CMSIS-NN's arm_nn_math_types.h picks its paths from), through the
planner's own reading of the CPU name (its JSON's kernels.dsp / kernels.mve). Skips without the
compiler or the built planner."""
import json
import os
import pathlib
import shutil
import subprocess

import pytest

from arenascope_plugin.acquire import elfinfo
from arenascope_plugin.acquire.symbols import TableSymbols
from arenascope_plugin.decode import kernels
from conftest import ROOT

BUILD = pathlib.Path(os.environ.get("ARENASCOPE_BUILD_DIR", ROOT / "build"))
PLANNER = BUILD / "planner" / "arenascope-plan"
MODEL = BUILD / "planner" / "dscnn_kws.tflite"  # the project's own model, written by the build
GCC = shutil.which("arm-none-eabi-gcc")
FLAGS = ["-mcpu=cortex-m0plus", "-mcpu=cortex-m3", "-mcpu=cortex-m4", "-mcpu=cortex-m4 -mfloat-abi=hard",
         "-mcpu=cortex-m7", "-mcpu=cortex-m23", "-mcpu=cortex-m33", "-mcpu=cortex-m33+nodsp",
         "-mcpu=cortex-m55 -mfloat-abi=hard", "-mcpu=cortex-m55 -mfloat-abi=soft",
         "-mcpu=cortex-m55+nomve -mfloat-abi=hard"]


def gcc_features(flags):
    out = subprocess.run([GCC, *flags.split(), "-mthumb", "-dM", "-E", "-"], input="", capture_output=True,
                         text=True, check=True).stdout
    return "__ARM_FEATURE_DSP 1" in out, "__ARM_FEATURE_MVE" in out


class ElfLike(TableSymbols):
    def __init__(self, path, functions=()):
        super().__init__(dict.fromkeys(functions, 0x1000))
        self.elf_path = str(path)


@pytest.mark.skipif(GCC is None, reason="arm-none-eabi-gcc absent")
@pytest.mark.skipif(not MODEL.exists(), reason="build the planner and its model first")
@pytest.mark.parametrize("flags", FLAGS)
def test_cpu_from_build_attributes_matches_the_compilers_paths(tmp_path, flags):
    src, obj = tmp_path / "k.c", tmp_path / "k.o"
    src.write_text("int arm_fully_connected_s8(int a) { return a * 3; }\n")
    subprocess.run([GCC, *flags.split(), "-mthumb", "-c", str(src), "-o", str(obj)], check=True)
    attrs, why = elfinfo.build_attributes(str(obj))
    assert attrs and not why
    cpu, how = kernels.cpu_from_attributes(attrs)
    assert cpu is not None and "build attributes" in how
    model = MODEL
    doc = json.loads(subprocess.run([str(PLANNER), "--json", "--kernels", "cmsis-nn", "--cpu", cpu, str(model)],
                                    capture_output=True, text=True, check=True).stdout)
    assert (doc["kernels"]["dsp"], doc["kernels"]["mve"]) == gcc_features(flags), (flags, cpu)


def test_attribute_parser_reads_tags_pyelftools_stops_at():
    # 'A', subsection len 33 "aeabi", file sub-subsection (tag 1) of size 22: Tag_CPU_name "cortex-m55",
    # Tag_CPU_arch 21, Tag_DSP_extension 46 = 1, Tag_MVE_arch 48 = 2, Tag_compatibility 32 = 0 "".
    body = bytes([5]) + b"cortex-m55\0" + bytes([6, 21, 46, 1, 48, 2, 32, 0, 0])
    sub = bytes([1]) + (5 + len(body)).to_bytes(4, "little") + body
    section = b"A" + (4 + 6 + len(sub)).to_bytes(4, "little") + b"aeabi\0" + sub
    assert elfinfo.parse_build_attributes(section) == {5: "cortex-m55", 6: 21, 46: 1, 48: 2, 32: 0}
    for bad in (b"", b"B", section[:-3], b"A" + (99).to_bytes(4, "little") + b"aeabi\0"):
        with pytest.raises(ValueError):
            elfinfo.parse_build_attributes(bad)


def test_detect_kernels_from_linked_functions(tmp_path):
    missing = tmp_path / "gone.elf"
    build = kernels.detect(ElfLike(missing, ["arm_convolve_wrapper_s8", "arm_softmax_s8"]))
    assert (build.kernels, build.cpu) == ("cmsis-nn", "cortex-m4")
    assert "links arm_convolve_wrapper_s8 and 1 more" in build.evidence
    assert "cortex-m4 assumed" in build.evidence and "set arena cpu NAME" in build.evidence
    assert build.planner_args() == ["--kernels", "cmsis-nn", "--cpu", "cortex-m4"]
    plain = kernels.detect(ElfLike(missing, ["main"]))
    assert (plain.kernels, plain.cpu, plain.planner_args()) == ("reference", None, ["--kernels", "reference"])
    forced = kernels.detect(ElfLike(missing), "cmsis-nn", "cortex-m55+nomve")
    assert forced.planner_args() == ["--kernels", "cmsis-nn", "--cpu", "cortex-m55+nomve"]
    assert forced.evidence == ("cmsis-nn kernels: set arena kernels; but the ELF links none of CMSIS-NN's functions; "
                               "CPU cortex-m55+nomve: set arena cpu")
    agreed = kernels.detect(ElfLike(missing, ["arm_svdf_s8"]), "cmsis-nn", "m4")
    assert agreed.evidence == "cmsis-nn kernels: set arena kernels; CPU cortex-m4: set arena cpu"
    against = kernels.detect(ElfLike(missing, ["arm_svdf_s8"]), "reference")
    assert against.evidence == "reference kernels: set arena kernels; but the ELF links arm_svdf_s8, a CMSIS-NN build"


def test_settings_checks():
    assert kernels.check_kernels("cmsis-nn") is None and kernels.check_kernels("auto") is None
    assert "use auto, reference or cmsis-nn" in kernels.check_kernels("xtensa")
    for good in ("auto", "cortex-m4", "m55", "cortex-m55+nomve", "cortex-m33+nodsp"):
        assert kernels.check_cpu(good) is None, good
    for bad in ("cortex-a53", "cortex-m4+mve", "", "m55+"):
        assert "use auto or one of" in kernels.check_cpu(bad), bad


@pytest.mark.skipif(not MODEL.exists(), reason="build the planner and its model first")
def test_plugin_and_planner_agree_on_every_cpu():
    model = MODEL
    for cpu, (dsp, mve) in kernels._CPUS.items():  # pylint: disable=protected-access
        doc = json.loads(subprocess.run([str(PLANNER), "--json", "--kernels", "cmsis-nn", "--cpu", cpu, str(model)],
                                        capture_output=True, text=True, check=True).stdout)
        assert (doc["kernels"]["cpu"], doc["kernels"]["dsp"], doc["kernels"]["mve"]) == (cpu, dsp, mve)
