"""paths.built_tool finds the project's executables in any build tree CMake configured from this
checkout (issue 15: `cmake -B out` left the plugin without its planner), and not in a folder
configured from another source."""
import os
import pathlib

from arenascope_plugin import paths


def tree(root, name, home):
    t = pathlib.Path(root) / name
    (t / "planner").mkdir(parents=True)
    exe = t / "planner" / "arenascope-plan"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    (t / "CMakeCache.txt").write_text(f"# cache\nCMAKE_HOME_DIRECTORY:INTERNAL={home}\n")
    return str(exe)


def test_a_build_tree_other_than_build_is_found(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "ROOT", str(tmp_path))
    monkeypatch.setenv("PATH", "/nonexistent")
    tree(tmp_path, "elsewhere", "/some/other/source")   # configured from another checkout: not ours
    assert paths.built_tool("planner", "arenascope-plan") is None
    out = tree(tmp_path, "out", str(tmp_path))
    assert paths.built_tool("planner", "arenascope-plan") == out
    build = tree(tmp_path, "build", str(tmp_path))       # build/ comes first
    assert paths.built_tool("planner", "arenascope-plan") == build
    os.unlink(build)
    assert paths.built_tool("planner", "arenascope-plan") == out
