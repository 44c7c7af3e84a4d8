"""The plugin as a Python package (gdbplugin/pyproject.toml): pip installs it offline into a clean
virtual environment, the `arenascope` command says the VERSION file's version, GDB loads the
installed copy through the two-line stub (docs/gdb-commands.md, "Loading") and reads the demo
on QEMU with it, and an ELF carrying the agent's .debug_gdb_scripts entry
(target_agent/include/arenascope/gdb_autoload.h) makes GDB load it by itself - only from a
trusted path - while costing no flash. Expected values: the VERSION file, the checkout's files,
the entry's bytes as GDB's manual defines them, readelf and objcopy, the linker map."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from harness import FIRMWARE, FIRMWARE_MAP, ROOT, cortex_m_elf, elf_symbols, gdb_batch, map_sections, qemu

EXPECTED = (ROOT / "VERSION").read_text().strip()
PACKAGE = ROOT / "gdbplugin" / "arenascope_plugin"
PYTHON = "/usr/bin/python3"  # Debian's: python3-venv, python3-pip, python3-setuptools, python3-wheel
PY = f"python{sys.version_info.major}.{sys.version_info.minor}"
FIRMWARE_SRC = ROOT / "tests" / "firmware" / "gdb_autoload" / "main.c"
DEMO_LD = ROOT / "examples" / "demo" / "cortex_m4" / "mps2_an386.ld"

# The inline entry GDB's manual defines (kind 4, SECTION_SCRIPT_ID_PYTHON_TEXT: the script's name
# on the first line, the script, one NUL), with the script gdb_autoload.h promises.
INLINE_SCRIPT = ("arenascope\n"
                 "try:\n"
                 "    from arenascope_plugin import gdb as arenascope_gdb\n"
                 "except ModuleNotFoundError as exc:\n"
                 "    print('arenascope: the ELF asks for the plugin but GDB cannot import it (' + str(exc) + '): pip "
                 "install ./gdbplugin, and for a venv start GDB with PYTHONPATH=VENV/lib/python3.11/site-packages "
                 "(docs/gdb-commands.md)')\n"
                 "else:\n"
                 "    arenascope_gdb.load()\n")
INLINE_ENTRY = b"\x04" + INLINE_SCRIPT.encode() + b"\x00"


def run(cmd, **kw):
    kw.setdefault("timeout", 300)
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, stdin=subprocess.DEVNULL, **kw)


def source_tree(dest):
    """What pip sees in a clone: VERSION and gdbplugin/ as git tracks them (no build leftovers)."""
    dest.mkdir()
    shutil.copy(ROOT / "VERSION", dest / "VERSION")
    shutil.copytree(ROOT / "gdbplugin", dest / "gdbplugin",
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    return dest / "gdbplugin"


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    """A clean venv (no system site-packages, no network) with the package installed from the
    wheel Debian's Python builds (the venv has no `wheel` for pip to build with). Returns
    (venv folder, its site-packages)."""
    tmp = tmp_path_factory.mktemp("pkg")
    src = source_tree(tmp / "clone")
    r = run([PYTHON, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-w", tmp / "wheels",
             src])
    assert r.returncode == 0, r.stdout + r.stderr
    r = run([PYTHON, "-m", "venv", tmp / "venv"])
    assert r.returncode == 0, r.stdout + r.stderr
    wheels = list((tmp / "wheels").glob("arenascope-*.whl"))
    assert [w.name for w in wheels] == [f"arenascope-{EXPECTED}-py3-none-any.whl"]
    r = run([tmp / "venv" / "bin" / "pip", "install", "--no-index", wheels[0]])
    assert r.returncode == 0, r.stdout + r.stderr
    return tmp / "venv", tmp / "venv" / "lib" / PY / "site-packages"


def test_the_command_says_the_version_file_and_helps(venv, tmp_path):
    venv_dir, _ = venv
    command = venv_dir / "bin" / "arenascope"
    r = run([command, "--version"], cwd=tmp_path)  # away from the checkout
    assert (r.returncode, r.stdout, r.stderr) == (0, f"arenascope {EXPECTED}\n", "")
    r = run([command, "--help"], cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.startswith("arenascope without GDB:") and "arenascope info     --elf fw.elf" in r.stdout
    r = run([command, "nonsense"], cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("arenascope nonsense: unknown command"), r.stderr
    assert "Traceback" not in r.stderr


def test_the_venv_holds_only_the_package_and_its_files_are_gdbplugins(venv):
    venv_dir, site = venv
    r = run([venv_dir / "bin" / "pip", "list", "--format=freeze"])
    names = sorted(line.split("==")[0] for line in r.stdout.split())
    assert names == ["arenascope", "pip", "setuptools"], r.stdout  # clean: no pyelftools, nothing else
    r = run([venv_dir / "bin" / "pip", "show", "-f", "arenascope"])
    assert f"Version: {EXPECTED}\n" in r.stdout and f"Location: {site}\n" in r.stdout, r.stdout
    listed = {line.strip() for line in r.stdout.split("Files:\n", 1)[1].splitlines()}
    installed = {f for f in listed if f.startswith("arenascope_plugin/") and f.endswith(".py")}
    tracked = run(["git", "-C", ROOT, "ls-files", "gdbplugin/arenascope_plugin"]).stdout.split()
    expected = {f.removeprefix("gdbplugin/") for f in tracked if f.endswith(".py")} or {
        str(p.relative_to(PACKAGE.parent)) for p in PACKAGE.rglob("*.py")}  # not a git checkout
    assert installed == expected
    for f in installed:
        assert (site / f).read_bytes() == (ROOT / "gdbplugin" / f).read_bytes(), f
    # The one copy of the version that the build wrote, and the console script.
    assert "arenascope_plugin/VERSION" in listed
    assert (site / "arenascope_plugin" / "VERSION").read_text() == f"{EXPECTED}\n"
    assert "../../../bin/arenascope" in listed


def test_pip_install_dot_gdbplugin_as_the_issue_tried(tmp_path):
    """`pip install ./gdbplugin` itself, in a venv that sees Debian's setuptools and wheel."""
    src = source_tree(tmp_path / "clone")
    assert run([PYTHON, "-m", "venv", "--system-site-packages", tmp_path / "venv"]).returncode == 0
    r = run([tmp_path / "venv" / "bin" / "pip", "install", "--no-build-isolation", "--no-index", "./gdbplugin"],
            cwd=src.parent)
    assert r.returncode == 0, r.stdout + r.stderr
    r = run([tmp_path / "venv" / "bin" / "arenascope", "--version"], cwd=tmp_path)
    assert (r.returncode, r.stdout) == (0, f"arenascope {EXPECTED}\n")
    # Issue 33: the README's load line after this install, as written there (VENV replaced), works
    # in GDB (its Python does not see a venv by itself: the line says how it does).
    readme = " ".join((ROOT / "README.md").read_text().split())
    line = re.search(r"`(PYTHONPATH=\$\(VENV/bin/python -c '[^`]+)`", readme).group(1)
    line = line.replace("VENV", str(tmp_path / "venv")).replace("build/fw.elf", "")
    r = subprocess.run(["bash", "-c", line.replace("gdb-multiarch", "gdb-multiarch -q -nx -batch")
                        + " -ex 'arena version'"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert f"arenascope {EXPECTED}" in r.stdout and "ModuleNotFoundError" not in r.stderr, (line, r.stdout, r.stderr)


def test_building_without_the_version_file_is_refused_in_one_line(tmp_path):
    src = source_tree(tmp_path / "clone")
    (src.parent / "VERSION").unlink()  # gdbplugin/ copied alone
    r = run([PYTHON, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-w", tmp_path, src])
    assert r.returncode != 0
    assert (f"gdbplugin/setup.py: {src.parent / 'VERSION'} is missing or not one line MAJOR.MINOR.PATCH: build the "
            "package from a clone of the whole repository") in r.stdout + r.stderr
    assert not list(tmp_path.glob("*.whl"))


def test_a_wheel_from_the_sdist_says_the_same_version(tmp_path):
    """The source archive holds gdbplugin/ only (no VERSION above it): it carries the version in
    arenascope_plugin/VERSION, so the wheel built from the unpacked archive has it too."""
    src = source_tree(tmp_path / "clone")
    hook = f"import setuptools.build_meta as b; print(b.build_sdist({str(tmp_path / 'dist')!r}))"
    r = run([PYTHON, "-c", hook], cwd=src)
    assert r.returncode == 0, r.stdout + r.stderr
    archive = tmp_path / "dist" / r.stdout.split()[-1]
    assert archive.name == f"arenascope-{EXPECTED}.tar.gz", archive
    shutil.unpack_archive(archive, tmp_path / "unpacked")
    tree = tmp_path / "unpacked" / f"arenascope-{EXPECTED}"
    assert (tree / "arenascope_plugin" / "VERSION").read_text() == f"{EXPECTED}\n"
    assert (src / "arenascope_plugin" / "VERSION").exists() is False  # the clone's tree is untouched
    r = run([PYTHON, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-w", tmp_path / "w",
             tree])
    assert r.returncode == 0, r.stdout + r.stderr
    assert [w.name for w in (tmp_path / "w").glob("*.whl")] == [f"arenascope-{EXPECTED}-py3-none-any.whl"]


def gdb(args, cwd, env=None):
    return run(["gdb-multiarch", "-q", "-nx", "-batch", *args], cwd=cwd, timeout=120,
               env=dict(os.environ, **(env or {})))


def version_lines(text):
    return [line for line in text.splitlines() if line.startswith("arenascope ")]


STUB = "python import arenascope_plugin.gdb as a; a.load()"
WHERE = "python print('from', a.__file__)"


def test_the_two_line_stub_loads_the_installed_package(venv, tmp_path):
    _, site = venv
    # A venv's site-packages is not on GDB's sys.path: the stub's first line adds it ...
    r = gdb(["-ex", f"python import site; site.addsitedir('{site}')", "-ex", STUB, "-ex", WHERE,
             "-ex", "arena version"], tmp_path)
    assert f"from {site}/arenascope_plugin/gdb/__init__.py" in r.stdout, r.stdout + r.stderr
    assert version_lines(r.stdout) == [f"arenascope {EXPECTED}"] and "Traceback" not in r.stderr
    # ... or PYTHONPATH does, and the stub is one line.
    r = gdb(["-ex", STUB, "-ex", WHERE, "-ex", "arena version", "-ex", STUB], tmp_path, {"PYTHONPATH": str(site)})
    assert f"from {site}/arenascope_plugin/gdb/__init__.py" in r.stdout, r.stdout + r.stderr
    assert version_lines(r.stdout) == [f"arenascope {EXPECTED}"]
    assert r.stdout.count("arenascope: already loaded") == 1  # the second stub


@pytest.mark.skipif(not FIRMWARE.exists(), reason=f"{FIRMWARE} not built")
def test_arena_info_on_the_demo_from_the_installed_package(venv):
    _, site = venv
    with qemu(FIRMWARE) as (port, _log):
        _, text = gdb_batch(FIRMWARE, [f"python import site; site.addsitedir('{site}')", STUB, WHERE,
                                       "set arena colour off", "break demo_invoke_done if invokes == 1", "continue",
                                       "delete", "arena info"], remote_port=port)
    assert f"from {site}/arenascope_plugin/gdb/__init__.py" in text and "Traceback" not in text, text
    syms, sections = elf_symbols(FIRMWARE), map_sections(FIRMWARE_MAP)
    base, size = sections[".tensor_arena"]
    assert f"arenascope {EXPECTED}\n" in text
    assert f"arenascope descriptor at {syms['arenascope_descriptor']:#x} (symbol arenascope_descriptor)" in text
    assert re.search(rf"bounds: +{base:#x}-{base + size:#x}, size {size} B", text), text


# ------------------------------------------------------------------ .debug_gdb_scripts

@pytest.fixture(scope="module")
def elves(tmp_path_factory):
    """The test firmware with the demo's linker script and --gc-sections, without and with the
    entries: name -> ELF path (all in one folder, the one the safe-path tests trust)."""
    tmp = tmp_path_factory.mktemp("elves")
    plugin = ROOT / "gdbplugin" / "arenascope.py"
    variants = {"plain": [], "embedded": ["-DARENASCOPE_EMBED_GDB_SCRIPT=1"],
                "twice": ["-DARENASCOPE_EMBED_GDB_SCRIPT=1", "-DAUTOLOAD_IN_MAIN"],
                "file": [f'-DSCRIPT_FILE="{plugin}"']}
    return {name: cortex_m_elf(tmp / f"{name}.elf", "cortex-m4", DEMO_LD, [FIRMWARE_SRC], ["-Wl,--gc-sections", *flags])
            for name, flags in variants.items()}


def section_bytes(elf, name=".debug_gdb_scripts"):
    """A section's bytes from readelf's hex dump (4 groups of 8 hex digits from column 13)."""
    r = run(["readelf", "-x", name, elf])
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if re.match(r"  0x[0-9a-f]{8} ", line)]
    return bytes.fromhex("".join(line[13:48].replace(" ", "") for line in rows))


def section_flags(elf):
    """{name: flags} from readelf's section table."""
    out = run(["readelf", "-SW", elf]).stdout
    row = re.compile(r"^\s*\[\s*\d+\] (\S+)\s+\S+\s+[0-9a-f]{8} [0-9a-f]{6} [0-9a-f]{6} [0-9a-f]{2} ([A-Za-z ]*?)\s+\d",
                     re.M)  # [Nr] Name Type Addr Off Size ES Flags Lk Inf Al
    return {m.group(1): m.group(2).strip() for m in row.finditer(out)}


def test_the_entries_hold_exactly_the_manuals_bytes(elves):
    assert section_bytes(elves["embedded"]) == INLINE_ENTRY
    assert section_bytes(elves["twice"]) == INLINE_ENTRY  # "MS": the same entry twice is kept once
    assert section_bytes(elves["file"]) == b"\x01" + str(ROOT / "gdbplugin" / "arenascope.py").encode() + b"\x00"
    plain = section_flags(elves["plain"])
    assert plain[".text"] == "AX" and ".debug_gdb_scripts" not in plain  # opt-in: nothing without the macro
    compile(INLINE_SCRIPT.split("\n", 1)[1], "inline entry", "exec")  # the script is Python


def test_the_entry_costs_no_flash(elves):
    for name in ("embedded", "twice", "file"):
        flags = section_flags(elves[name])
        assert flags[".debug_gdb_scripts"] == "MS", flags  # mergeable strings, not A (allocated)
        # The program headers (every loadable segment's addresses and sizes) and the image a
        # programmer writes to flash are those of the firmware without the entry, byte for byte.
        headers = [run(["readelf", "-lW", elves[n]]).stdout.split("Program Headers:")[1].split("Section to")[0]
                   for n in ("plain", name)]
        assert headers[0] == headers[1] and "LOAD" in headers[0]
        images = []
        for n in ("plain", name):
            out = elves[n].with_suffix(".bin")
            assert run(["arm-none-eabi-objcopy", "-O", "binary", elves[n], out]).returncode == 0
            images.append(out.read_bytes())
        assert images[0] == images[1] and images[0]


def test_gdb_loads_the_installed_plugin_from_a_trusted_elf(elves, venv, tmp_path):
    _, site = venv
    elf = elves["embedded"]
    r = gdb(["-iex", f"add-auto-load-safe-path {elf.parent}", elf, "-ex", "info auto-load python-scripts",
             "-ex", "arena version"], tmp_path, {"PYTHONPATH": str(site)})
    assert re.search(r"^Yes\s+arenascope\s*$", r.stdout, re.M), r.stdout + r.stderr
    assert version_lines(r.stdout) == [f"arenascope {EXPECTED}"] and "Traceback" not in r.stderr, r.stdout + r.stderr


def test_gdb_declines_an_untrusted_elf_and_has_no_arena_command(elves, venv, tmp_path):
    _, site = venv
    elf = elves["embedded"]
    r = gdb([elf, "-ex", "info auto-load python-scripts", "-ex", "arena version"], tmp_path, {"PYTHONPATH": str(site)})
    assert f'warning: File "{elf}" auto-loading has been declined by your `auto-load safe-path\'' in r.stderr, r.stderr
    assert re.search(r"^No\s+arenascope\s*$", r.stdout, re.M), r.stdout
    assert 'Undefined command: "arena".' in r.stderr and not version_lines(r.stdout)


def test_a_trusted_elf_without_the_package_says_what_to_do_in_one_line(elves, tmp_path):
    probe = gdb(["-ex", "python import importlib.util as u; print(u.find_spec('arenascope_plugin') is None)"],
                tmp_path)
    if probe.stdout.strip() != "True":
        pytest.skip("arenascope_plugin is installed where GDB's Python finds it without help")
    elf = elves["embedded"]
    r = gdb(["-iex", f"add-auto-load-safe-path {elf.parent}", elf, "-ex", "arena version"], tmp_path)
    said = [line for line in (r.stdout + r.stderr).splitlines() if line.startswith("arenascope:")]
    assert said == ["arenascope: the ELF asks for the plugin but GDB cannot import it (No module named "
                    "'arenascope_plugin'): pip install ./gdbplugin, and for a venv start GDB with "
                    "PYTHONPATH=VENV/lib/python3.11/site-packages (docs/gdb-commands.md)"], r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr


def test_a_file_entry_sources_the_checkouts_plugin_when_its_folder_is_trusted(elves, tmp_path):
    elf, folder = elves["file"], ROOT / "gdbplugin"
    r = gdb(["-iex", f"add-auto-load-safe-path {folder}", elf, "-ex", "info auto-load python-scripts",
             "-ex", "arena version"], tmp_path)
    assert re.search(rf"^Yes\s+{re.escape(str(folder / 'arenascope.py'))}\s*$", r.stdout, re.M), r.stdout + r.stderr
    assert version_lines(r.stdout) == [f"arenascope {EXPECTED}"], r.stdout + r.stderr
    r = gdb([elf, "-ex", "arena version"], tmp_path)  # the ELF's folder is not the script's
    assert "auto-loading has been declined" in r.stderr and 'Undefined command: "arena".' in r.stderr
