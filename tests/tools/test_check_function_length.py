"""tools/check_function_length.py, the C/C++ function length limit (issue 40), on its fixtures
(tests/fixtures/function_length): it fails on a function one line over the limit, passes one at
the limit, counts what a function holds and nothing that is not one."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "tools" / "check_function_length.py"
FIXTURES = ROOT / "tests" / "fixtures" / "function_length"

sys.path.insert(0, str(CHECK.parent))
import check_function_length as cfl  # noqa: E402


def run(*args):
    return subprocess.run([sys.executable, str(CHECK), *map(str, args)], capture_output=True, text=True, cwd=ROOT)


def lengths(name):
    return {f.name: f.lines for f in cfl.functions((FIXTURES / name).read_text())}


def test_one_line_over_the_limit_fails_and_is_named():
    r = run(FIXTURES / "too_long.cpp")
    assert r.returncode == 1
    assert r.stdout.splitlines() == ["tests/fixtures/function_length/too_long.cpp:8: too_long is 81 lines (limit 80)"]
    assert "1 function(s) over 80 lines" in r.stderr


def test_at_the_limit_passes():
    assert lengths("too_long.cpp") == {"too_long": 81, "at_the_limit": 80}
    r = run("--limit", 81, FIXTURES / "too_long.cpp")
    assert r.returncode == 0, r.stdout
    assert "1 files checked, every function at most 81 lines" in r.stdout


def test_report_only_lists_and_passes():
    r = run("--report-only", FIXTURES)
    assert r.returncode == 0
    assert len([line for line in r.stdout.splitlines() if "reported, not enforced" in line]) == 5  # 4 C++, 1 Python


def test_lambdas_local_classes_members_and_trailing_returns_count():
    assert lengths("nested.cpp") == {"holds_a_lambda": 86, "Widget::draw": 82, "trailing": 81}


def test_tables_classes_and_literals_are_not_functions():
    found = lengths("not_functions.cpp")
    assert found.pop("c_function") == 3  # in extern "C" { ... }
    assert found.pop("literals") == 9  # its braces in strings, characters, comments and a raw string
    assert found == {f"member_{i}": 1 for i in range(90)}  # the class's inline members, not the class
    r = run(FIXTURES / "not_functions.cpp")
    assert r.returncode == 0 and r.stdout.startswith("check_function_length.py: 1 files checked")


@pytest.mark.parametrize(
    ("head", "name"),
    [
        ("\nstatic int f(int a, char *b)", "f"),
        ("\nbool Foo::operator==(const Foo &o) const noexcept", "Foo::operator=="),
        ("\nauto g() -> std::pair<int, int>", "g"),
        ("\nTEST(Suite, Case)", "TEST(Suite, Case)"),
        ("\nvoid stop(void) __attribute__((noreturn))", "stop"),
        ("\nstatic const int table[] =", None),
        ("\nnamespace a::b", None),
        ("\nconst auto f = [](int x)", None),
    ],
)
def test_function_heads(head, name):
    assert cfl.function_name(head) == name


def test_the_project_passes():
    r = run()
    assert r.returncode == 0, r.stdout + r.stderr


def test_python_functions_are_held_to_the_same_limit():
    # too_long: its def line, 39 statements of two lines and a return of two (lines 5-85);
    # at_the_limit one line fewer (88-167); Holder.method 4 lines (171-174), its nested function
    # inside them.
    found = {f.name: (f.line, f.lines) for f in cfl.functions_in(FIXTURES / "too_long.py")}
    assert found == {"too_long": (5, 81), "at_the_limit": (88, 80), "Holder.method": (171, 4)}
    r = run(FIXTURES / "too_long.py")
    assert r.returncode == 1
    assert r.stdout.splitlines() == ["tests/fixtures/function_length/too_long.py:5: too_long is 81 lines (limit 80)"]
