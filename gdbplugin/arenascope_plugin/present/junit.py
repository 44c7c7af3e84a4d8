"""`arena check --junit FILE` and `arenascope check --junit FILE`: the checks as a JUnit XML report,
the form CI systems read (GitLab's junit artifacts, Jenkins' junit step): one <testsuite
name="arenascope">, one <testcase> a check (classname "arenascope.check", name the rule), a FAIL
as <failure> with its reason, a WARN passing with its reason in <system-out>. Written with
xml.etree, whole or not at all (present/files.write_whole)."""
import os
import xml.etree.ElementTree as ET

from arenascope_plugin.analyse import figures
from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.present import files


class JunitError(ArenascopeError):
    """The report cannot be written where asked; the message says why."""


def tree(checks: list[dict], name: str = "arenascope") -> ET.ElementTree:
    """The JUnit document of the snapshot's checks ({rule, verdict, reason})."""
    failures = sum(c["verdict"] == figures.FAIL for c in checks)
    root = ET.Element("testsuites", tests=str(len(checks)), failures=str(failures), errors="0")
    suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(checks)), failures=str(failures),
                          errors="0", skipped="0")
    for c in checks:
        case = ET.SubElement(suite, "testcase", classname=f"{name}.check", name=c["rule"])
        if c["verdict"] == figures.FAIL:
            ET.SubElement(case, "failure", message=c["reason"], type="FAIL").text = c["reason"]
        else:
            ET.SubElement(case, "system-out").text = f"{c['verdict']}: {c['reason']}"
    return ET.ElementTree(root)


def write(checks: list[dict], path: str) -> str:
    """Writes the report to path (~ expanded); returns its one-line summary. JunitError when the
    path is not a regular file or its folder does not exist, OSError when it cannot be written."""
    problem = files.target_problem(path, "JUnit report")
    if problem:
        raise JunitError(problem)
    path = os.path.expanduser(path)
    files.write_whole(path, lambda f: tree(checks).write(f, encoding="utf-8", xml_declaration=True))
    failed = sum(c["verdict"] == figures.FAIL for c in checks)
    return f"wrote {path} ({len(checks)} testcases, {failed} failures)"
