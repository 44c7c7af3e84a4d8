"""The agent as a user's firmware gets it (docs/agent.md, "Build"): the outside firmware in
tests/packaging/outside_fw (an STM32F405 ELF), copied to a temporary folder, is built from a
fresh build folder against the INSTALLED package (find_package), through add_subdirectory from
outside the tree, through FetchContent from a git repository of this tree, with Make through
pkg-config, and for the host port (plain gcc). Each ELF is checked for real: its agent functions
have the sizes arm-none-eabi-gcc gives the agent's source compiled here by hand, the descriptor
sits in .bss in SRAM, and the linker map names the library each came from. The user's stricter
warnings reach the agent's sources as warnings, never errors; a firmware for another core is
stopped by the installed package's ABI check. Needs cmake, arm-none-eabi-gcc, gcc, git, pkgconf.
"""
import json
import pathlib
import re
import shutil
import subprocess

import pytest

from harness import FIRMWARE, ROOT

AGENT = ROOT / "target_agent"
OUTSIDE = ROOT / "tests" / "packaging" / "outside_fw"
TOOLCHAIN = ROOT / "cmake" / "arm-none-eabi.cmake"
M4_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=softfp", "-mfpu=fpv4-sp-d16"]
# What main.c calls, and the descriptor: each must be in the ELF with the size of its own build.
CALLED = ["arenascope_init", "arenascope_arena_add", "arenascope_region_publish", "arenascope_arena_set_marks",
          "arenascope_canary_fill", "arenascope_invoke_mark", "arenascope_measure"]
# The user's -Wmissing-declarations on the agent's fault port (tests/packaging/outside_fw/CMakeLists.txt).
AGENT_WARNING = "no previous declaration for 'arenascope_fault_handler'"
VERSION = (ROOT / "VERSION").read_text().strip()

TOOLS = ("cmake", "arm-none-eabi-gcc", "gcc", "git", "pkgconf")
pytestmark = pytest.mark.skipif(not all(shutil.which(t) for t in TOOLS),
                                reason="needs cmake, arm-none-eabi-gcc, gcc, git and pkgconf")


def run(cmd, cwd=None, ok=True, env=None):
    """Runs cmd (a generous deadline: a loaded 2-core CI machine); asserts its exit status is 0 when ok."""
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=600, env=env)
    if ok:
        assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r


def nm_sizes(path, nm="arm-none-eabi-nm"):
    """{symbol: (type letter, address, size)} of the defined symbols nm -S lists in path."""
    out = {}
    for line in run([nm, "-S", path]).stdout.splitlines():
        f = line.split()
        if len(f) == 4:
            out[f[3]] = (f[2], int(f[0], 16), int(f[1], 16))
    return out


@pytest.fixture(scope="module")
def expected_sizes(tmp_path_factory):
    """The agent's function and descriptor sizes from its source, compiled here by hand as the
    package builds it (Cortex-M4, softfp, -Os, C99): independent of CMake."""
    obj = tmp_path_factory.mktemp("ref") / "agent.o"
    run(["arm-none-eabi-gcc", *M4_FLAGS, "-Os", "-DNDEBUG", "-std=c99", "-ffunction-sections", "-fdata-sections",
         f"-I{AGENT / 'include'}", "-c", AGENT / "src" / "arenascope_agent.c", "-o", obj])
    sizes = nm_sizes(obj)
    return {s: sizes[s][2] for s in CALLED + ["arenascope_descriptor"]}


def outside_copy(tmp):
    """The outside firmware's sources in a folder of their own, outside the arenascope tree."""
    return pathlib.Path(shutil.copytree(OUTSIDE, tmp / "fw"))


def configure_build(src, build, *defs, cross=True):
    """cmake -S src -B build (MinSizeRel, compile_commands.json) then cmake --build; the build log."""
    tool = [f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN}"] if cross else []
    log = run(["cmake", "-S", src, "-B", build, *tool, "-DCMAKE_BUILD_TYPE=MinSizeRel",
               "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", *defs]).stdout
    r = run(["cmake", "--build", build])
    return log + r.stdout + r.stderr


def install_agent(tmp, cross=True):
    """cmake -S target_agent (standalone) then cmake --install to tmp/prefix: the prefix."""
    configure_build(AGENT, tmp / "agent-build", cross=cross)
    run(["cmake", "--install", tmp / "agent-build", "--prefix", tmp / "prefix"])
    return tmp / "prefix"


@pytest.fixture(scope="module")
def m4_prefix(tmp_path_factory):
    return install_agent(tmp_path_factory.mktemp("m4"))


def check_elf(elf, fw_map, lib_dir, expected_sizes):
    """The ELF has the agent's functions main.c calls, each with its size from the source, the
    descriptor in .bss in the STM32F405's SRAM, and the map names lib_dir's libraries."""
    syms = nm_sizes(elf)
    for s in CALLED:
        assert syms.get(s, ("?",))[0] == "T", f"{elf}: {s} missing"
        assert syms[s][2] == expected_sizes[s], f"{elf}: {s}: {syms[s][2]} bytes, the source gives {expected_sizes[s]}"
    kind, addr, size = syms["arenascope_descriptor"]
    assert kind == "B" and 0x20000000 <= addr < 0x20020000 and size == expected_sizes["arenascope_descriptor"]
    assert syms["arenascope_fault_handler"][0] == "T"
    # Archive members the link took, each path as the linker saw it (relative to the build folder).
    fw_map = pathlib.Path(fw_map)
    taken = {(fw_map.parent / p).resolve() for p in re.findall(r"^(\S*libarenascope_\w+\.a)\(arenascope_",
                                                            fw_map.read_text(), re.M)}
    want = {(pathlib.Path(lib_dir) / lib).resolve() for lib in ("libarenascope_agent.a", "libarenascope_fault.a")}
    assert taken == want, f"{fw_map}: the agent's objects came from {taken}, not {want}"
    attrs = run(["arm-none-eabi-readelf", "-A", elf]).stdout
    assert "Tag_CPU_arch: v7E-M" in attrs and "Tag_ABI_VFP_args" not in attrs, attrs


def check_no_forced_warnings(build, log):
    """The user's own warnings reached the agent's sources and stayed warnings: no compile line in
    the user's build has -Werror or -pedantic."""
    assert AGENT_WARNING in log, log
    for entry in json.loads((pathlib.Path(build) / "compile_commands.json").read_text()):
        assert not re.search(r"-Werror|-pedantic", entry["command"]), entry["command"]


def test_installed_package_has_the_files(m4_prefix):
    for rel in ("lib/libarenascope_agent.a", "lib/libarenascope_fault.a", "lib/libarenascope_tflm_recorder.a",
                "include/arenascope/agent.h", "include/arenascope/fault.h", "include/arenascope_port.h",
                "include/arenascope_tflm_recorder.h", "lib/cmake/arenascope/arenascope-config.cmake",
                "lib/cmake/arenascope/arenascope-config-version.cmake", "lib/pkgconfig/arenascope-agent.pc",
                "share/arenascope/arenascope_abi_check.c"):
        assert (m4_prefix / rel).is_file(), rel
    # The Cortex-M port's header (the reset-handler stack painter), not the host's.
    assert "arenascope_port_stack_paint(" in (m4_prefix / "include" / "arenascope_port.h").read_text()
    version_file = m4_prefix / "lib" / "cmake" / "arenascope" / "arenascope-config-version.cmake"
    assert f'PACKAGE_VERSION "{VERSION}"' in version_file.read_text()


def test_find_package(tmp_path, m4_prefix, expected_sizes):
    fw = outside_copy(tmp_path)
    configure_build(fw, tmp_path / "b", f"-DCMAKE_PREFIX_PATH={m4_prefix}")
    check_elf(tmp_path / "b" / "fw.elf", tmp_path / "b" / "fw.map", m4_prefix / "lib", expected_sizes)


def test_add_subdirectory(tmp_path, expected_sizes):
    fw = outside_copy(tmp_path)
    log = configure_build(fw, tmp_path / "b", "-DARENASCOPE_VIA=subdirectory", f"-DARENASCOPE_DIR={ROOT}")
    check_elf(tmp_path / "b" / "fw.elf", tmp_path / "b" / "fw.map", tmp_path / "b" / "arenascope", expected_sizes)
    check_no_forced_warnings(tmp_path / "b", log)


def test_fetchcontent(tmp_path, expected_sizes):
    """FetchContent clones a git repository holding this tree's agent (its working files, so
    the test sees uncommitted changes too): no network."""
    repo = tmp_path / "arenascope.git"
    repo.mkdir()
    for part in ("VERSION", "cmake", "target_agent"):
        src = ROOT / part
        (shutil.copytree if src.is_dir() else shutil.copy)(src, repo / part)
    git = ["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    run([*git, "init", "-q"])
    run([*git, "add", "-A"])
    run([*git, "commit", "-qm", "agent"])
    fw = outside_copy(tmp_path)
    log = configure_build(fw, tmp_path / "b", "-DARENASCOPE_VIA=fetchcontent", f"-DARENASCOPE_DIR=file://{repo}")
    deps = tmp_path / "b" / "_deps"
    assert (deps / "arenascope-src" / ".git").is_dir(), "FetchContent did not clone"
    check_elf(tmp_path / "b" / "fw.elf", tmp_path / "b" / "fw.map", deps / "arenascope-build", expected_sizes)
    check_no_forced_warnings(tmp_path / "b", log)


def test_in_tree_demo_has_the_same_agent_symbols(tmp_path, m4_prefix):
    """The outside ELF's agent symbols are the in-tree demo's (build/firmware/demo_fw.elf)."""
    if not FIRMWARE.exists():
        pytest.skip(f"{FIRMWARE} not built")
    fw = outside_copy(tmp_path)
    configure_build(fw, tmp_path / "b", f"-DCMAKE_PREFIX_PATH={m4_prefix}")
    ours, demo = nm_sizes(tmp_path / "b" / "fw.elf"), nm_sizes(FIRMWARE)
    for s in CALLED + ["arenascope_descriptor", "arenascope_fault_handler"]:
        assert ours[s][0] == demo[s][0] and ours[s][2] == demo[s][2], (s, ours[s], demo[s])


def test_other_core_is_refused(tmp_path, m4_prefix):
    """A Cortex-M0 firmware against the Cortex-M4 install: GNU ld would link it without a word;
    the package's ABI check stops the compile and says what to do."""
    fw = outside_copy(tmp_path)
    run(["cmake", "-S", fw, "-B", tmp_path / "b", f"-DCMAKE_TOOLCHAIN_FILE={TOOLCHAIN}", "-DARENASCOPE_CPU=cortex-m0",
         f"-DCMAKE_PREFIX_PATH={m4_prefix}"])
    r = run(["cmake", "--build", tmp_path / "b"], ok=False)
    assert r.returncode != 0
    out = r.stdout + r.stderr
    assert "arenascope: __ARM_ARCH differs from the installed libraries' (__ARM_ARCH 7)" in out, out
    assert "-mcpu=cortex-m4" in out and not (tmp_path / "b" / "fw.elf").exists()


def test_make_with_pkg_config(tmp_path, m4_prefix, expected_sizes):
    fw = outside_copy(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "PKG_CONFIG_PATH": str(m4_prefix / "lib" / "pkgconfig")}
    flags = run(["pkgconf", "--cflags", "--libs", "arenascope-fault"], env=env).stdout.split()
    assert flags == [f"-I{m4_prefix}/lib/pkgconfig/../../include", f"-L{m4_prefix}/lib/pkgconfig/../../lib",
                     "-larenascope_fault", "-larenascope_agent"]
    assert run(["pkgconf", "--modversion", "arenascope-agent"], env=env).stdout.strip() == VERSION
    run(["make", "-C", fw, f"ARENASCOPE_PREFIX={m4_prefix}"])
    check_elf(fw / "fw_make.elf", fw / "fw_make.map", m4_prefix / "lib/pkgconfig/../../lib", expected_sizes)


def test_pkg_config_with_a_multiarch_libdir_after_the_tree_moves(tmp_path):
    """CMAKE_INSTALL_LIBDIR lib/arm-none-eabi (a level deeper, as Debian's multiarch dirs are):
    each .pc file still finds its prefix, after the whole installed tree has been moved."""
    configure_build(AGENT, tmp_path / "b", "-DCMAKE_INSTALL_LIBDIR=lib/arm-none-eabi")
    run(["cmake", "--install", tmp_path / "b", "--prefix", tmp_path / "first"])
    moved = tmp_path / "moved"
    shutil.move(tmp_path / "first", moved)
    pcdir = moved / "lib" / "arm-none-eabi" / "pkgconfig"
    env = {"PATH": "/usr/bin:/bin", "PKG_CONFIG_PATH": str(pcdir)}
    flags = run(["pkgconf", "--cflags", "--libs", "arenascope-tflm"], env=env).stdout.split()
    inc, lib = (pathlib.Path(flags[0][2:]).resolve(), pathlib.Path(flags[1][2:]).resolve())
    assert (inc, lib) == (moved / "include", moved / "lib" / "arm-none-eabi"), flags
    assert flags[2:] == ["-larenascope_tflm_recorder", "-larenascope_agent"], flags
    assert (lib / "libarenascope_tflm_recorder.a").is_file() and (inc / "arenascope" / "agent.h").is_file()
    check = pathlib.Path(run(["pkgconf", "--variable=abi_check", "arenascope-agent"], env=env).stdout.strip())
    assert check.resolve() == moved / "share" / "arenascope" / "arenascope_abi_check.c" and check.is_file()
    assert "//" not in str(check), check


def test_host_port_through_find_package(tmp_path):
    """target_agent standalone with plain gcc installs the host port; the outside project, with no
    toolchain file, links it and runs."""
    prefix = install_agent(tmp_path, cross=False)
    assert "arenascope_port_stack_paint_below_sp" in (prefix / "include" / "arenascope_port.h").read_text()
    fw = outside_copy(tmp_path)
    configure_build(fw, tmp_path / "b", f"-DCMAKE_PREFIX_PATH={prefix}", cross=False)
    elf = tmp_path / "b" / "fw.elf"
    assert run([elf]).returncode == 0
    syms = nm_sizes(elf, nm="nm")
    assert syms["arenascope_descriptor"][0] == "B" and syms["arenascope_init"][0] == "T"


def doc_blocks(lang):
    """The ```lang blocks of docs/agent.md, each as its stripped lines."""
    text = (ROOT / "docs" / "agent.md").read_text()
    blocks = re.findall(rf"```{lang}\n(.*?)```", text, re.S)
    return [[ln.strip() for ln in b.splitlines() if ln.strip()] for b in blocks]


def test_docs_snippets_are_the_lines_built_here():
    """docs/agent.md's CMake snippets and its pkg-config Makefile lines are, line for line, the
    outside firmware's (the test above builds those)."""
    cmake_lines = {ln.strip() for ln in (OUTSIDE / "CMakeLists.txt").read_text().splitlines()}
    blocks = doc_blocks("cmake")
    assert len(blocks) == 3, blocks
    for block in blocks:
        assert [ln for ln in block if ln not in cmake_lines] == [], block
    make_lines = {ln.strip() for ln in (OUTSIDE / "Makefile").read_text().splitlines()}
    pkg = [b for b in doc_blocks("make") if any("pkgconf" in ln for ln in b)]
    assert len(pkg) == 1 and [ln for ln in pkg[0] if ln not in make_lines] == [], pkg
