#!/usr/bin/python3
"""Every file path named in the project's comments and docs exists (issue 40: comments and docs
kept naming modules that had moved or gone).

What counts as a path: a word that ends in one of the project's file extensions (.py, .c, .h,
.cpp, .hpp, .md, .cmake, .sh, .json, .mjs, .ld, .cfg, .toml) and names a directory, e.g.
`gdbplugin/arenascope_plugin/acquire/batch.py`, `acquire/batch.py`, `docs/agent.md`,
`viewer/src/app.cpp`. It is found when a tracked file's path ends with it (so a path given from
the plugin's package, `analyse/faults.py`, or from a part's folder, `src/app.cpp`, is found), or
when it exists relative to the naming file's folder. Bare file names (`faults.py`) of Python, shell and
CMake files are found when some tracked file has that name (a bare `.h` or `.c` is most often
another project's: TFLM's, FreeRTOS's). Not checked: words with a placeholder or a wildcard (`FILE.py`,
`*.py`, capitals), paths that start elsewhere than the project's top folders and the plugin's
packages (other projects' files, `tensorflow/...`, `../shared/`, `/usr/...`; a few bare names of
other projects' tools, FOREIGN_NAMES), dotted symbols, and CHANGELOG.md (it is history: it names
what was there then).

    python3 tools/check_paths.py [--root DIR]      exit 0: all found; 1: prints each missing one;
                                                   77: not a git checkout (skipped)
    python3 tools/check_paths.py --self-test       the checker finds a missing path in a fixture
"""
import argparse
import ast
import io
import pathlib
import re
import subprocess
import sys
import tempfile
import tokenize

EXTENSIONS = ("py", "c", "h", "cpp", "hpp", "md", "cmake", "sh", "json", "mjs", "ld", "cfg", "toml")
SCANNED = (".py", ".c", ".h", ".cpp", ".hpp", ".md", ".cmake", ".sh", ".txt", ".mjs", ".ld", ".cfg", ".toml")
WORD = re.compile(r"(?<![\w./-])((?:\.\./|\./)?[\w.+-]+(?:/[\w.+-]+)*\.(?:" + "|".join(EXTENSIONS) + r"))(?![\w/])")
PACKAGES = {"arenascope_plugin", "acquire", "analyse", "decode", "present", "serve", "gdb", "ports"}
FOREIGN_NAMES = {"idf.py", "gdbserver.py", "zephyr_module.py", "build.cmake"}  # other projects' files
SKIP_FILES = ("CHANGELOG.md",)
BARE = (".py", ".sh", ".cmake")  # a bare file name is checked for these (others: other projects' headers)


def tracked(root: pathlib.Path) -> list[str]:
    """The repository's tracked files (git ls-files), relative to root."""
    out = subprocess.run(["git", "ls-files"], cwd=root, check=True, capture_output=True, text=True).stdout
    return [p for p in out.splitlines() if p]


def _ours(word: str, firsts: set[str]) -> bool:
    """Whether a word names a file of this project (not another project's, a tool's output, a
    symbol): a path from one of the project's top folders or the plugin's packages, or a bare
    name; never one with a dot in its stem (`diagnosis.Diagnosis.json`, `fw.elf-gdb.py`)."""
    if word.startswith(("-", "../", "/")) or word.rsplit("/", 1)[-1].count(".") > 1:
        return False
    parts = word.removeprefix("./").split("/")
    return len(parts) == 1 or parts[0] in firsts


def placeholder(word: str) -> bool:
    """A word that stands for any file: FILE.py, NAME.md, X.h, *.py, <dir>/x.py, foo/bar_*.py."""
    stem = word.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return any(c in word for c in "*<>{}$%") or (stem.isupper() and len(stem) > 0) or stem in ("x", "foo", "bar")


C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
HASH_COMMENT = re.compile(r"(?:^|(?<=\s))#[^\n]*")


def prose(name: str, text: str) -> str:
    """The comments and docs of a file, at their own line numbers (the rest blanked): all of a
    Markdown file; a Python file's comments and strings; C, C++, JavaScript and linker scripts'
    // and /* */ comments; a shell, CMake, TOML or config file's # comments."""
    if name.endswith(".md"):
        return text
    if name.endswith(".py"):
        return _python_prose(text)
    found = C_COMMENT if name.endswith((".c", ".h", ".cpp", ".hpp", ".mjs", ".ld")) else HASH_COMMENT
    return _only(found, text)


def _python_prose(text: str) -> str:
    """A Python file's comments and docstrings (module, class, function), at their lines."""
    lines = [""] * (text.count("\n") + 2)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                lines[tok.start[0] - 1] += " " + tok.string
        tree = ast.parse(text)
    except (tokenize.TokenError, SyntaxError):
        return ""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            for k, part in enumerate(body[0].value.value.split("\n")):
                if body[0].lineno - 1 + k < len(lines):
                    lines[body[0].lineno - 1 + k] += " " + part
    return "\n".join(lines)


def _only(pattern: re.Pattern, text: str) -> str:
    """text with everything but pattern's matches blanked, newlines kept."""
    out, at = [], 0
    for m in pattern.finditer(text):
        out.append(re.sub(r"[^\n]", " ", text[at:m.start()]))
        out.append(m.group(0))
        at = m.end()
    out.append(re.sub(r"[^\n]", " ", text[at:]))
    return "".join(out)


def missing(root: pathlib.Path) -> list[tuple[str, int, str]]:
    """[(file, line, path)] of the paths named in comments and docs that no tracked file matches."""
    files = tracked(root)
    names = {p.rsplit("/", 1)[-1] for p in files}
    firsts = {p.split("/", 1)[0] for p in files if "/" in p} | PACKAGES
    suffixes = set()
    for p in files:
        parts = p.split("/")
        suffixes.update("/".join(parts[k:]) for k in range(len(parts)))
    out = []
    for f in files:
        if not f.endswith(SCANNED) or f.rsplit("/", 1)[-1] in SKIP_FILES or "/fixtures/" in f:
            continue
        try:
            text = prose(f, (root / f).read_text(encoding="utf-8"))
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            for m in WORD.finditer(line):
                word = m.group(1)
                if not _ours(word, firsts) or placeholder(word):
                    continue
                bare = word.removeprefix("./")
                if "/" not in bare:
                    if bare in names or not bare.endswith(BARE) or bare in FOREIGN_NAMES:
                        continue
                elif bare in suffixes or (root / f).parent.joinpath(word).exists():
                    continue
                out.append((f, n, word))
    return out


def self_test() -> int:
    """The checker reports a missing path in a repository made here, and not a present one."""
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "pkg").mkdir()
        (root / "pkg" / "here.py").write_text('"""See pkg/gone.py and pkg/here.py; FILE.py is a placeholder."""\n')
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        subprocess.run(["git", "add", "."], cwd=root, check=True)
        got = missing(root)
    if got != [("pkg/here.py", 1, "pkg/gone.py")]:
        print(f"check_paths self-test FAILED: {got}")
        return 1
    print("check_paths self-test: a missing path is found, a present one and a placeholder are not")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(pathlib.Path(__file__).resolve().parents[1]))
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    try:
        gone = missing(pathlib.Path(args.root))
    except (OSError, subprocess.CalledProcessError):
        print(f"check_paths: skipped: {args.root} is not a git checkout (its tracked files are what is checked)")
        return 77
    for f, n, word in gone:
        print(f"{f}:{n}: names {word}, which no tracked file is")
    print(f"check_paths: {len(gone)} path(s) named in comments and docs do not exist" if gone else
          "check_paths: every path named in comments and docs exists")
    return 1 if gone else 0


if __name__ == "__main__":
    sys.exit(main())
