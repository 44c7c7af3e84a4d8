"""The static report (`arenascope-viewer --report/--svg`) given hostile text (issue 37, "slow on
hostile sizes"): control characters in a check's reason, a fault's text, a label and `--name`, and
labels and lines of the largest size the viewer reads. The SVG must be well-formed XML (parsed
here by expat, xml.etree) and so must the HTML's inline SVG; no control character, noncharacter
or byte that is not UTF-8 is written anywhere (each is U+FFFD; tab and newlines are spaces); a
1 MiB label and 256 KiB lines are cut and wrapped in time that follows their length (before,
such a label stalled the report for minutes: the run here would pass its timeout)."""
import json
import re
import subprocess
import xml.etree.ElementTree as ET

import pytest

from harness import ROOT
from test_viewer import VIEWER

FAULT = ROOT / "tests" / "fixtures" / "demo_stack_fault_snapshot.json"
SVG_NS = "{http://www.w3.org/2000/svg}"
# Every C0 control but tab, LF and CR, DEL, the C1 controls and the noncharacters U+FFFE, U+FFFF.
HOSTILE = "".join(chr(c) for c in [*range(0, 9), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F, 0x85, 0x9F, 0xFFFE, 0xFFFF])
FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]")

pytestmark = pytest.mark.skipif(not VIEWER.exists(), reason="viewer not built")


def write_report(tmp_path, snap, *name):
    """Writes snap's report (HTML and SVG) with the viewer; returns their bytes."""
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(snap))
    html, svg = tmp_path / "report.html", tmp_path / "report.svg"
    cmd = [str(VIEWER), str(path), "--report", str(html), "--svg", str(svg), *name]
    proc = subprocess.run(cmd, capture_output=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return html.read_bytes(), svg.read_bytes()


def svg_texts(root):
    return ["".join(t.itertext()) for t in root.iter(SVG_NS + "text")]


def clean(data):
    """The report's bytes as text: strict UTF-8 with no forbidden character (its own tab and
    newlines between elements aside)."""
    text = data.decode("utf-8")  # strict: a byte that is not UTF-8 raises
    bad = FORBIDDEN.search(text)
    assert bad is None, (hex(ord(bad.group())), text[max(0, bad.start() - 60):bad.start() + 20])
    return text


def test_control_characters_give_well_formed_svg_and_html(tmp_path):
    snap = json.loads(FAULT.read_text())
    for c in snap["checks"]:  # a failed check's reason is a line; a passed one's a tooltip
        c["reason"] += " " + HOSTILE + "\t\n\r<&"
    for v in snap["fault"]["verdicts"]:
        v["headline"] += " " + HOSTILE
    snap["fault"]["notes"] = [*snap["fault"].get("notes", []), "note " + HOSTILE]
    snap["arenas"][0]["regions"][0]["label"] = "tensor 0 " + HOSTILE
    snap["arenas"][0]["regions"][1]["name"] = "name " + HOSTILE
    # --name as bytes: an escape sequence, a bell, and bytes that are not UTF-8.
    name = b"fw.elf \x1b[2J\x07 \xff\xfe\xc3"
    html, svg = write_report(tmp_path, snap, "--name", name)

    root = ET.fromstring(svg)  # before: "not well-formed (invalid token)"
    texts = svg_texts(root)
    clean(svg)
    assert any(t.startswith("arenascope report: fw.elf \ufffd[2J\ufffd \ufffd\ufffd\ufffd") for t in texts), texts[0]
    stack = next(c for c in snap["checks"] if c["rule"] == "stack")
    # The check's reason on its own line(s), each control character one U+FFFD.
    wanted = stack["reason"][:40]
    assert any(wanted in t for t in texts)
    assert any("\ufffd" * 8 in t for t in texts)

    page = clean(html)
    assert "<title>arenascope report: fw.elf \ufffd[2J\ufffd \ufffd\ufffd\ufffd</title>" in page
    assert "note " + "\ufffd" * len(HOSTILE) in page
    # The HTML's inline SVG is XML too.
    inline = re.search(r"<svg .*?</svg>", page, re.S).group()
    ET.fromstring(inline)
    # Tab, newline and carriage return are spaces; markup stays text.
    assert "\ufffd" * len(HOSTILE) + "   &lt;&amp;" in page


def test_a_mebibyte_label_and_long_lines_are_cut_and_wrapped(tmp_path):
    snap = json.loads(FAULT.read_text())
    unit = "model/block_13/depthwise_conv2d;Relu6 "
    label = (unit * ((1 << 20) // len(unit) + 1))[: 1 << 20]  # the longest string the viewer reads
    assert len(label.encode()) == 1 << 20
    regions = snap["arenas"][0]["regions"]
    big = max(regions, key=lambda r: r["size_bytes"] if r["kind"] == "tensor" else 0)
    big["label"] = label
    word = "x" * (256 << 10)  # a word no line holds: cut by characters, line after line
    stack = next(c for c in snap["checks"] if c["rule"] == "stack")
    stack["reason"] = word
    snap["fault"]["verdicts"][0]["headline"] = "VERDICT: " + label[: 256 << 10]
    html, svg = write_report(tmp_path, snap)

    texts = svg_texts(ET.fromstring(svg))
    # The label cut in the middle on the map: its start and its end.
    assert any(t.startswith("model/") and "..." in t and len(t) < 300 for t in texts)
    # The word wrapped whole, and no line longer than the panel's column (776 px, 7.25 px each).
    pieces = [t for t in texts if t and set(t) == {"x"}]
    assert sum(map(len, pieces)) == len(word)
    assert max(len(t) for t in texts) <= 1600 // 7
    page = clean(html)
    assert f"<td>{label}</td>" in page  # the table holds the label whole
    ET.fromstring(re.search(r"<svg .*?</svg>", page, re.S).group())
