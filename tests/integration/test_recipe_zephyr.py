"""The Zephyr module recipe (examples/zephyr/). Zephyr itself is not installable here (no west,
no Zephyr SDK in Debian), so the Zephyr build is NOT run; what is checked for real:

- zephyr/module.yml parses (python3-yaml) and validates (python3-pykwalify) against the part of
  Zephyr's own module schema (scripts/zephyr_module.py, METADATA_SCHEMA) it uses, and its
  build.cmake folder holds a CMakeLists.txt and build.kconfig names a file, as
  zephyr_module.py's process_cmake/process_kconfig require;
- Kconfig parses with kconfiglib (python3-kconfiglib: the library Zephyr's own Kconfig step
  uses) with no warning, under a stand-in for the two Zephyr symbols it refers to, and its
  options are the ones CMakeLists.txt reads;
- every source and include path CMakeLists.txt names exists, and those sources compile for a
  Cortex-M4 with arm-none-eabi-gcc with the definitions it sets (a stand-in for the Zephyr build).
"""
import re
import shutil
import subprocess

import pytest

from harness import ROOT

MODULE = ROOT / "examples" / "zephyr"
yaml = pytest.importorskip("yaml", reason="python3-yaml missing (bash tools/setup-deps.sh)")

# The subset of Zephyr's METADATA_SCHEMA (scripts/zephyr_module.py) for the keys a module of
# sources uses; the full schema also has sysbuild-*, settings, tests, samples, boards, blobs.
SCHEMA = {
    "type": "map",
    "mapping": {
        "name": {"required": False, "type": "str"},
        "build": {"required": False, "type": "map", "mapping": {
            "cmake": {"required": False, "type": "str"},
            "kconfig": {"required": False, "type": "str"},
            "cmake-ext": {"required": False, "type": "bool"},
            "kconfig-ext": {"required": False, "type": "bool"},
            "depends": {"required": False, "type": "seq", "sequence": [{"type": "str"}]},
        }},
    },
}


def module_yml():
    return yaml.safe_load((MODULE / "zephyr" / "module.yml").read_text())


def test_module_yml():
    meta = module_yml()
    pykwalify = pytest.importorskip("pykwalify.core", reason="python3-pykwalify missing (bash tools/setup-deps.sh)")
    pykwalify.Core(source_data=meta, schema_data=SCHEMA).validate(raise_exception=True)
    assert meta["name"] == "arenascope"
    assert (MODULE / meta["build"]["cmake"] / "CMakeLists.txt").is_file()
    assert (MODULE / meta["build"]["kconfig"]).is_file()


def kconfig():
    kconfiglib = pytest.importorskip("kconfiglib", reason="python3-kconfiglib missing (bash tools/setup-deps.sh)")
    return kconfiglib


def test_kconfig_parses(tmp_path):
    kconfiglib = kconfig()
    # Stand-in for Zephyr's tree: the two symbols the module's Kconfig refers to.
    top = tmp_path / "Kconfig"
    top.write_text('config INIT_STACKS\n\tbool\nconfig CPU_CORTEX_M\n\tbool\n\tdefault y\n'
                   f'source "{MODULE / module_yml()["build"]["kconfig"]}"\n')
    kconf = kconfiglib.Kconfig(str(top), warn_to_stderr=False)
    assert kconf.warnings == []
    kconf.syms["ARENASCOPE"].set_value(2)
    assert kconf.syms["ARENASCOPE_STACK_ZEPHYR_THREAD"].str_value == "y"
    assert kconf.syms["INIT_STACKS"].str_value == "y", "the thread-stack choice must select INIT_STACKS"
    assert kconf.syms["ARENASCOPE_MAX_ARENAS"].str_value == "1"
    assert kconf.syms["ARENASCOPE_FAULT_RECORD"].str_value == "n"
    used = set(re.findall(r"CONFIG_(\w+)", (MODULE / "CMakeLists.txt").read_text()))
    assert used and used <= set(kconf.syms), used - set(kconf.syms)


def cmake_paths():
    """Every ${ARENASCOPE_AGENT_DIR}/... path in CMakeLists.txt, resolved, with the Kconfig option
    guarding it (None: always)."""
    text = (MODULE / "CMakeLists.txt").read_text()
    agent = re.search(r"set\(ARENASCOPE_AGENT_DIR \$\{CMAKE_CURRENT_LIST_DIR\}/(\S+)\)", text).group(1)
    out = []
    guard = None
    for line in text.splitlines():
        m = re.match(r"\s*if\(CONFIG_(\w+)\)", line)
        if m and m.group(1) != "ARENASCOPE":
            guard = m.group(1)
        elif re.match(r"\s*endif\(\)", line):
            guard = None
        ifdef = re.search(r"_ifdef\(CONFIG_(\w+)", line)
        for p in re.findall(r"\$\{ARENASCOPE_AGENT_DIR\}/(\S+?)[)\s]", line + " "):
            out.append((MODULE / agent / p, ifdef.group(1) if ifdef else guard, line.split("(")[0].strip()))
    return out


def test_cmake_paths_exist():
    paths = cmake_paths()
    assert {cmd for _p, _g, cmd in paths} >= {"zephyr_library_sources", "zephyr_include_directories",
                                              "zephyr_library_sources_ifdef"}
    for path, _guard, cmd in paths:
        assert path.exists(), f"{cmd}: {path} does not exist"


@pytest.mark.skipif(not shutil.which("arm-none-eabi-gcc"), reason="arm-none-eabi-gcc missing")
def test_standin_build_every_option(tmp_path):
    """The sources for each option set compile (STAND-IN for the Zephyr build, not Zephyr)."""
    paths = cmake_paths()
    includes = [f"-I{p}" for p, _g, cmd in paths if cmd == "zephyr_include_directories"]
    for option in ("ARENASCOPE_STACK_ZEPHYR_THREAD", "ARENASCOPE_STACK_PAINT_BELOW_SP", "ARENASCOPE_FAULT_RECORD"):
        defines = ["-DARENASCOPE_MAX_ARENAS=1"]
        if option == "ARENASCOPE_STACK_ZEPHYR_THREAD":
            defines.append("-DARENASCOPE_STACK_PAINT_PATTERN=0xAAAAAAAA")
        sources = [p for p, g, cmd in paths if cmd.startswith("zephyr_library_sources") and g in (None, option)]
        for i, src in enumerate(sources):
            r = subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-Os", "-Wall", "-Wextra",
                                "-Werror", *defines, *includes, "-c", str(src), "-o", str(tmp_path / f"{i}.o")],
                               capture_output=True, text=True, timeout=120)
            assert r.returncode == 0, f"{option}: {src}\n{r.stderr}"


def test_notice_zephyr_build_not_run():
    pytest.skip("the Zephyr build itself is not run here (no west or Zephyr SDK in Debian): module.yml, "
                "Kconfig and the CMake paths are checked, and the sources compiled by a stand-in")
