"""The PlatformIO and Arduino recipes (examples/platformio/library.json, examples/arduino/
library.properties with tools/arduino_library.py). Neither PlatformIO nor the Arduino CLI is in
Debian, so their builds are not run: the manifests are checked field by field against their
specs (PlatformIO's library.json: name, version, build.srcDir/includeDir/srcFilter/flags;
Arduino library specification 1.5: the required fields, architectures, src/ at the root), the
version against the VERSION file, every path for existence, and then a STAND-IN for their build
compiles exactly the files each manifest selects with arm-none-eabi-gcc for a Cortex-M4, as
those build systems would (PlatformIO: srcDir filtered by srcFilter, -I includeDir and the
flags; Arduino: every .c/.cpp/.S under src/, -I src), warnings as errors.
"""
import fnmatch
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from harness import ROOT

VERSION = (ROOT / "VERSION").read_text().strip()
PIO = ROOT / "examples" / "platformio"
ARDUINO = ROOT / "examples" / "arduino"
sys.path.insert(0, str(ROOT / "tools"))
import arduino_library  # noqa: E402

needs_gcc = pytest.mark.skipif(not shutil.which("arm-none-eabi-gcc"),
                               reason="arm-none-eabi-gcc missing (bash tools/setup-deps.sh)")
CORTEX_M4 = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=soft", "-Os", "-Wall", "-Wextra", "-Werror"]


def standin_compile(sources, flags, out):
    """The stand-in build: each source compiled on its own, as a library build system does."""
    assert sources
    for i, src in enumerate(sources):
        r = subprocess.run(["arm-none-eabi-gcc", *CORTEX_M4, *flags, "-c", str(src), "-o", str(out / f"{i}.o")],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"{src}:\n{r.stderr}"


def pio_selected(manifest):
    """Files under build.srcDir that build.srcFilter selects: PlatformIO's rule, filters applied
    in order, `+<pattern>` adds and `-<pattern>` removes the matching paths (relative to srcDir)."""
    src_dir = (PIO / manifest["build"]["srcDir"]).resolve()
    every = sorted(p.relative_to(src_dir).as_posix() for p in src_dir.rglob("*") if p.is_file())
    chosen = set()
    for item in manifest["build"]["srcFilter"]:
        sign, pattern = item[0], item[2:-1]
        assert item[1] == "<" and item[-1] == ">" and sign in "+-", item
        hits = {f for f in every if fnmatch.fnmatch(f, pattern)}
        assert hits, f"srcFilter {item} matches nothing under {src_dir}"
        chosen = chosen | hits if sign == "+" else chosen - hits
    return [src_dir / f for f in sorted(chosen)]


def test_platformio_manifest():
    manifest = json.loads((PIO / "library.json").read_text())
    assert manifest["version"] == VERSION, "library.json's version is not the VERSION file's"
    for key in ("name", "version", "description", "keywords", "license", "frameworks", "platforms", "build"):
        assert key in manifest, key
    for key in ("srcDir", "includeDir"):
        assert (PIO / manifest["build"][key]).is_dir(), manifest["build"][key]
    for flag in manifest["build"]["flags"]:
        if flag.startswith("-I"):
            assert (PIO / flag[2:]).is_dir(), flag
    selected = pio_selected(manifest)
    agent = (ROOT / "target_agent").resolve()
    assert [p.relative_to(agent).as_posix() for p in selected] == sorted([
        "src/arenascope_agent.c", "src/arenascope_fault.c", "ports/cortex_m/arenascope_fault_port.c",
        "ports/cortex_m/arenascope_fault_hook.c", "ports/cortex_m/arenascope_stack_paint.S",
        "adapters/tflm/arenascope_tflm_recorder.c"])  # the TFLM adapter's recorder; its header on the flags' -I


@needs_gcc
def test_platformio_standin_build(tmp_path):
    manifest = json.loads((PIO / "library.json").read_text())
    flags = [f"-I{PIO / manifest['build']['includeDir']}"]
    flags += [f"-I{PIO / f[2:]}" if f.startswith("-I") else f for f in manifest["build"]["flags"]]
    standin_compile(pio_selected(manifest), flags, tmp_path)


def test_arduino_properties():
    props = arduino_library.properties(ARDUINO / "library.properties")
    # Arduino library specification, format 1.5: these fields are required.
    for key in ("name", "version", "author", "maintainer", "sentence", "paragraph", "category", "url",
                "architectures"):
        assert props.get(key), key
    assert props["version"] == VERSION, "library.properties' version is not the VERSION file's"
    assert props["category"] in ("Display", "Communication", "Signal Input/Output", "Sensors", "Device Control",
                                 "Timing", "Data Storage", "Data Processing", "Other")
    assert props["url"].startswith(("http://", "https://"))
    # Cortex-M cores only: Mbed (Nano 33 BLE Sense, the TFLM board), SAMD, Renesas (UNO R4).
    assert "mbed_nano" in props["architectures"].split(",") and "avr" not in props["architectures"]


def test_arduino_library_standin_build(tmp_path):
    lib = arduino_library.assemble(tmp_path / "libraries")
    props = arduino_library.properties(lib / "library.properties")
    src = lib / "src"
    for header in props["includes"].split(","):
        assert (src / header).is_file(), header
    # every public header the agent has, and the TFLM adapter's (docs/integrating-tflm.md)
    for header in (ROOT / "target_agent" / "include" / "arenascope").glob("*.h"):
        assert (src / "arenascope" / header.name).read_bytes() == header.read_bytes(), header.name
    for header in ("arenascope_tflm.h", "arenascope_tflm_recorder.h", "arenascope_port.h"):
        assert (src / header).is_file(), header
    sources = sorted(p for p in src.rglob("*") if p.suffix in (".c", ".cpp", ".S"))
    assert [p.name for p in sources] == sorted(pathlib.PurePath(v).name for v in arduino_library.FILES.values()
                                               if v.endswith(".c"))
    if shutil.which("arm-none-eabi-gcc"):
        (tmp_path / "o").mkdir()
        standin_compile(sources, [f"-I{src}"], tmp_path / "o")


def test_arduino_version_mismatch_is_refused(tmp_path, monkeypatch):
    fake = tmp_path / "arduino"
    fake.mkdir()
    text = (ARDUINO / "library.properties").read_text().replace(f"version={VERSION}", "version=9.9.9")
    (fake / "library.properties").write_text(text)
    monkeypatch.setattr(arduino_library, "RECIPE", fake)
    with pytest.raises(ValueError, match="version=9.9.9 but VERSION says"):
        arduino_library.assemble(tmp_path / "out")
    r = subprocess.run(["/usr/bin/python3", str(ROOT / "tools" / "arduino_library.py")], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "usage" in r.stderr
