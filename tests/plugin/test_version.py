"""version.read: the VERSION file's one line, or "unknown" (never an exception) when the file is
missing, unreadable or not MAJOR.MINOR.PATCH."""
import pytest

from arenascope_plugin import version
from conftest import ROOT


def test_the_plugin_reads_the_repository_version_file():
    assert version.PATH == str(ROOT / "VERSION")
    assert version.VERSION == (ROOT / "VERSION").read_text().strip()


@pytest.mark.parametrize("content,expected", [
    (b"0.1.0\n", "0.1.0"), (b"12.3.45", "12.3.45"), (b"  2.0.1  \r\nsecond line\n", "2.0.1"),
    (b"", "unknown"), (b"\n0.1.0\n", "unknown"), (b"v0.1", "unknown"), (b"0.1.0; rm -rf /", "unknown"),
    (b"\xff\xfe0.1.0", "unknown"), (b"0.1.0" * 100, "unknown"),
])
def test_content(tmp_path, content, expected):
    p = tmp_path / "VERSION"
    p.write_bytes(content)
    assert version.read(str(p)) == expected


def test_missing_file_and_a_folder_say_unknown(tmp_path):
    assert version.read(str(tmp_path / "VERSION")) == "unknown"
    assert version.read(str(tmp_path)) == "unknown"
