"""`cmake --install BUILD --prefix P` of the root project (cmake/install_tools.cmake): the tools
in P/bin and the GDB plugin in P/share/arenascope/gdbplugin, each working from there (their
--version is the VERSION file's; the plugin loads in GDB; bin/arenascope finds its package).
Installs the build named by ARENASCOPE_BUILD_DIR into a temporary prefix (the build is only
read; cmake writes its install_manifest.txt there)."""
import os
import shutil
import subprocess

import pytest

from harness import BUILD, ROOT

VERSION = (ROOT / "VERSION").read_text().strip()
ENV = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "PYTHONPATH")}


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    if not (BUILD / "cmake_install.cmake").exists():
        pytest.skip(f"{BUILD} is not a configured build (ARENASCOPE_BUILD_DIR)")
    p = tmp_path_factory.mktemp("install") / "prefix"
    r = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(p)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not list(p.rglob("__pycache__")), "the install copied byte-code caches"
    return p


def run(cmd):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=120, env=ENV,
                          stdin=subprocess.DEVNULL, cwd="/")


def test_tools_in_bin_say_the_version(prefix):
    tools = ["arenascope-plan", "arenascope"]
    if (BUILD / "viewer" / "arenascope-viewer").exists():
        tools.append("arenascope-viewer")
    for name in tools:
        path = prefix / "bin" / name
        assert os.access(path, os.X_OK), f"{path} not installed executable"
        r = run([path, "--version"])
        assert (r.returncode, r.stdout) == (0, f"{name} {VERSION}\n"), (name, r.stdout, r.stderr)


def test_standalone_tool_runs_the_installed_package(prefix, tmp_path):
    """bin/arenascope runs share/arenascope/gdbplugin/arenascope, also through a symlink, and a bad
    ELF is one line of error from the installed package (not the source tree's)."""
    link = tmp_path / "arenascope"
    link.symlink_to(prefix / "bin" / "arenascope")
    r = run([link, "info", "--elf", tmp_path / "missing.elf", "--openocd", "127.0.0.1:1"])
    assert r.returncode != 0 and "Traceback" not in r.stderr and r.stderr.strip(), r.stderr
    # The script itself, as the launcher runs it: Python puts its folder (the installed package's) first.
    r = run([prefix / "share" / "arenascope" / "gdbplugin" / "arenascope", "--version"])
    assert (r.returncode, r.stdout) == (0, f"arenascope {VERSION}\n"), r.stderr


def test_gdb_plugin_sources_from_share(prefix):
    plugin = prefix / "share" / "arenascope" / "gdbplugin" / "arenascope.py"
    assert plugin.is_file() and (plugin.parent / "arenascope_plugin" / "__init__.py").is_file()
    if not shutil.which("gdb-multiarch"):
        pytest.skip("no gdb-multiarch")
    r = run(["gdb-multiarch", "-batch", "-nx", "-ex", f"source {plugin}", "-ex", "python import arenascope_plugin; "
             "print(arenascope_plugin.__file__)", "-ex", "arena version"])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == str(plugin.parent / "arenascope_plugin" / "__init__.py"), r.stdout
    assert lines[1] == f"arenascope {VERSION}", r.stdout
