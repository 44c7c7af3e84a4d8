#!/usr/bin/env python3
"""The function length limit (issue 40): no C, C++ or Python function longer than LIMIT lines.

A function's length is its body's physical lines, from the line of its opening brace to the line of
its closing brace, both included, comments and blank lines too (what a reader scrolls through).
A lambda or a local class counts toward the function that holds it. Functions defined in a class
(inline members) and test bodies (gtest's TEST(...) { ... }) are functions. The limit is 80 lines:
a function over it is split into well-named smaller ones, never waived (there is no waiver).
A Python function counts from its `def` line to its last line (its syntax tree's lineno and
end_lineno; decorators not counted), methods one by one, a function nested in one toward it; its
complexity, statements and branches are ruff's (pyproject.toml: C901, PLR0915, PLR0912).

The scan needs no compiler or build tree: it blanks comments, string and character literals and
preprocessor lines, then matches braces, and takes a brace that follows `NAME(...)` (then const,
noexcept, override, final, a trailing return type) at namespace or class scope as a function's
body. (clang-tidy-14's readability-function-size counts alike, but needs a compilation database
for every file: the agent's Cortex-M and RISC-V ports are cross-compiled in build trees of their
own and the header-only common/ is compiled by no target; with the build's database, which is
GCC's, it needs -std=c++17 added, stops on clang's own warnings under the build's -Werror, and
takes about 5 s a planner source (nlohmann/json), minutes for the tree on two cores. This check
takes about a second.)

Checked: all of the project's C/C++ (planner/, common/, target_agent/, viewer/, examples/, tools/
and the tests' C/C++, tests/viewer/ too) and its Python (gdbplugin/, tools/, tests/, examples/),
less the checker's fixtures. Nothing is reported only:
the viewer's and the examples' long functions were split too (issue 40), and the repository holds
no third-party C/C++ to leave out (examples/tflm_standin is the project's own stand-in, written
after TFLM's names; the STM32CubeIDE recipe's CubeMX-named files are the project's own, shortened).

    python3 tools/check_function_length.py [--limit N] [--report-only] [FILE_OR_DIR...]

Prints `path:line: NAME is N lines (limit L)` per function over the limit; exits 1 when a checked
one is, else 0. FILE_OR_DIR given: those are checked (--report-only: reported, exit 0).
"""

from __future__ import annotations

import argparse
import ast
import bisect
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

LIMIT = 80
ROOT = Path(__file__).resolve().parent.parent
EXTENSIONS = (".c", ".h", ".cc", ".cpp", ".hpp", ".py")
CHECKED = ("planner", "common", "target_agent", "viewer", "examples", "tools", "tests", "gdbplugin")
# Functions too long on purpose: the checker's own test fixtures.
SKIPPED = ("tests/fixtures",)

CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof", "alignof", "decltype", "defined"}
# A function's name at the end of the code before its parameters: qualified, an operator, a
# destructor, and with template arguments.
_NAME = re.compile(
    r"((?:[A-Za-z_]\w*\s*::\s*)*(?:operator\s*(?:\(\s*\)|[^\s\w(]+|\s+\w+)|~?[A-Za-z_]\w*))\s*(?:<[^<>]*>)?$"
)
QUALIFIER = re.compile(r"\s*(?:\b(?:const|volatile|noexcept|override|final|mutable)\b|&&|&|noexcept\s*\([^()]*\))\s*$")


@dataclass
class Function:
    name: str
    line: int  # of the opening brace, or of a Python function's `def` (1-based)
    lines: int


# What the scan blanks: preprocessor lines (with their continuations), comments, raw strings,
# string and character literals (not a digit separator: 1'000).
_NOT_CODE = re.compile(
    r"""(?P<directive>^[ \t]*\#(?:[^\n\\]|\\.|\\\n)*)
      |//[^\n]*
      |/\*.*?\*/
      |R"(?P<delim>[^()\\ \n]{0,16})\(.*?\)(?P=delim)"
      |"(?:[^"\\\n]|\\.)*"
      |(?:(?<![\w'])|(?<=\bu8)|(?<=\b[LuU]))'(?:[^'\\\n]|\\.)*'""",
    re.M | re.S | re.X,
)


def strip_code(text: str) -> str:
    """The text with comments, string and character literals and preprocessor lines blanked
    (newlines kept, so that offsets and line numbers are the source's)."""
    return _NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _matching_open(header: str, close: int) -> int:
    depth = 0
    for k in range(close, -1, -1):
        if header[k] == ")":
            depth += 1
        elif header[k] == "(":
            depth -= 1
            if depth == 0:
                return k
    return -1


def _unqualified(head: str) -> str:
    """`head` less the qualifiers after a parameter list (const, noexcept, override, ...)."""
    head = head.rstrip()
    while True:
        tail = head[-200:]  # the qualifiers are at the end: no need to scan a long head whole
        m = QUALIFIER.search(tail)
        if not m:
            return head
        head = head[: len(head) - len(tail) + m.start()]


def function_name(header: str) -> str | None:
    """The function's name when `header` (the code since the last ; { or }) is a function's head,
    else None."""
    head = header.rstrip()
    arrow = head.rfind("->")
    if arrow > 0 and _unqualified(head[:arrow]).endswith(")"):
        head = head[:arrow]  # a trailing return type
    head = _unqualified(head)
    if not head.endswith(")"):
        return None
    open_at = _matching_open(head, len(head) - 1)
    if open_at < 0:
        return None
    before = head[:open_at].rstrip()[-300:]
    if before.endswith("__attribute__"):  # void f(void) __attribute__((...)) {
        return function_name(before[: -len("__attribute__")])
    m = _NAME.search(before)
    if not m:
        return None
    name = re.sub(r"\s+", "", m.group(1))
    if name in ("TEST", "TEST_F", "TEST_P", "TYPED_TEST"):  # gtest: the test's name is its arguments
        name += re.sub(r"\s+", " ", head[open_at:])
    if name in CONTROL or "=" in before[: m.start()]:  # a call in an initializer: x = f(...) {
        return None
    return name


def functions_in(path: Path) -> list[Function]:
    """Every function defined in the file at `path`: Python by its syntax tree, else C or C++."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return python_functions(text) if path.suffix == ".py" else functions(text)


def python_functions(text: str) -> list[Function]:
    """Every function and method of a Python source, outermost only (a function nested in one
    counts toward it, as a lambda does in C++): its length from its `def` line to its last line,
    both included (decorators are not counted); none from a file that does not parse."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    found: list[Function] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                end = child.end_lineno or child.lineno
                found.append(Function(prefix + child.name, child.lineno, end - child.lineno + 1))
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)
    visit(tree, "")
    return found


def functions(text: str) -> list[Function]:
    """Every function defined in `text` (C or C++ source), outermost only."""
    code = strip_code(text)
    newlines = [m.start() for m in re.finditer("\n", code)]
    found: list[Function] = []
    stack: list[tuple[str, int, str]] = []  # (kind: scope, function or other; offset; name)
    boundary = 0
    for m in re.finditer(r"[;{}]", code):
        c, i = m.group(0), m.start()
        if c == "{":
            if any(kind != "scope" for kind, _, _ in stack):
                stack.append(("other", i, ""))
            else:
                stack.append(_opened(code[boundary:i], i))
        elif c == "}" and stack:
            kind, start, name = stack.pop()
            if kind == "function":
                first, last = bisect.bisect(newlines, start) + 1, bisect.bisect(newlines, i) + 1
                found.append(Function(name, first, last - first + 1))
        boundary = i + 1
    return found


def _opened(header: str, at: int) -> tuple[str, int, str]:
    """What a brace at namespace or class scope opens, from the code before it."""
    name = function_name(header)
    if name:
        return ("function", at, name)
    if re.search(r"\b(namespace|class|struct|union|enum)\b|\bextern\s*$", header):
        return ("scope", at, "")
    return ("other", at, "")


def tracked(paths: tuple[str, ...]) -> list[Path]:
    """The C/C++ files git tracks under `paths` (repository-relative); outside a checkout, every
    one on disk."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--", *paths], cwd=ROOT, check=True, capture_output=True,
                                text=True).stdout.split("\0")
    except (OSError, subprocess.CalledProcessError):
        return on_disk([ROOT / p for p in paths])
    return sorted(ROOT / f for f in listed if f.endswith(EXTENSIONS) and (ROOT / f).is_file())


def on_disk(paths: list[Path]) -> list[Path]:
    """The C/C++ files given and those under the directories given (less build*/ and hidden ones)."""
    files = []
    for path in paths:
        if path.is_file():
            files.append(path)
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = [d for d in dirnames if not d.startswith(("build", "."))]
            files += [Path(dirpath) / f for f in filenames if f.endswith(EXTENSIONS)]
    return sorted(files)


def _under(path: Path, prefixes: tuple[str, ...]) -> bool:
    rel = path.resolve().relative_to(ROOT).as_posix() if path.resolve().is_relative_to(ROOT) else ""
    return any(rel == p or rel.startswith(p + "/") for p in prefixes)


def over_limit(files: list[Path], limit: int) -> list[tuple[Path, Function]]:
    out = []
    for f in files:
        for fn in functions_in(f):
            if fn.lines > limit:
                out.append((f, fn))
    return out


def _shown(path: Path) -> str:
    return os.path.relpath(path, Path.cwd()) if path.is_absolute() else str(path)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=LIMIT, help=f"the most lines a function may have ({LIMIT})")
    ap.add_argument("--report-only", action="store_true", help="list the functions over the limit, exit 0")
    ap.add_argument("paths", nargs="*", help="files or directories (default: the project's)")
    args = ap.parse_args(argv)
    if args.paths:
        files = on_disk([Path(p).resolve() for p in args.paths])
        enforced, listed = ([], files) if args.report_only else (files, [])
    else:
        everything = [f for f in tracked(CHECKED) if not _under(f, SKIPPED)]
        enforced, listed = ([], everything) if args.report_only else (everything, [])
    bad = over_limit(enforced, args.limit)
    for f, fn in bad:
        print(f"{_shown(f)}:{fn.line}: {fn.name} is {fn.lines} lines (limit {args.limit})")
    for f, fn in over_limit(listed, args.limit):
        print(f"{_shown(f)}:{fn.line}: {fn.name} is {fn.lines} lines (limit {args.limit}; reported, not enforced)")
    if bad:
        print(f"check_function_length.py: {len(bad)} function(s) over {args.limit} lines in {len(enforced)} files: "
              "split them (tools/check_function_length.py says how they are counted)", file=sys.stderr)
        return 1
    print(f"check_function_length.py: {len(enforced)} files checked, every function at most {args.limit} lines"
          + (f"; {len(listed)} files reported only" if listed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
