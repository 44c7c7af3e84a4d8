"""The static report (`arenascope-viewer --report/--svg`, viewer/src/report.h) in a real browser:
Debian's chromium, headless. The SVG is screenshot at its own size and its pixels are checked at
positions this file computes from the snapshot and the report's documented geometry
(docs/user-guide.md, "Reports": the map's axis is x 24..1576, 1552 px for the whole arena; its
bar rows 61..86; lane i from row 93 + i x lane_h, lane_h = clamp(720 / lanes, 2, 18)). The HTML
is loaded as a page and its DOM (after its script ran) is checked: every region in the table,
the summary's checks and the fault's verdicts in full, the filter, nothing external, nothing
cut off, no mouse hints, and a hostile label stays text."""
import json
import re
import shutil
import subprocess

import pytest

from harness import ROOT
from test_viewer import PALETTE, VIEWER, family, lanes

CHROMIUM = shutil.which("chromium")
FAULT = ROOT / "tests" / "fixtures" / "demo_stack_fault_snapshot.json"

pytestmark = [pytest.mark.skipif(not VIEWER.exists(), reason="viewer not built"),
              pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (Debian package chromium)")]


def browser(tmp_path, url, *args):
    """Runs headless chromium on url; returns its stdout (the DOM with --dump-dom)."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           f"--user-data-dir={tmp_path / 'chromium-profile'}", *args, url]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def write_report(tmp_path, snap_path):
    html, svg = tmp_path / "report.html", tmp_path / "report.svg"
    proc = subprocess.run([str(VIEWER), str(snap_path), "--report", str(html), "--svg", str(svg)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return html, svg


def test_the_svg_shows_every_area_and_region_where_its_bytes_are(tmp_path):
    snap = json.loads(FAULT.read_text())
    a = snap["arenas"][0]
    _, svg = write_report(tmp_path, FAULT)
    height = int(re.search(r'<svg [^>]*height="(\d+)"', svg.read_text()).group(1))
    # The head zoomed below the whole map: temp ends at +736, plus a tenth (at least 64 B).
    assert f"the head zoomed, +0..+{a['temp_bytes'] + max(64, a['temp_bytes'] // 10)}" in svg.read_text()
    png = tmp_path / "svg.png"
    browser(tmp_path, svg.as_uri(), f"--window-size=1600,{height}", f"--screenshot={png}")
    from PIL import Image
    image = Image.open(png).convert("RGB")

    def x(off):
        return 24 + off / a["size_bytes"] * 1552

    lane_of = lanes(a["regions"])
    n_lanes = max(lane_of.values(), default=0) + 1
    lane_h = max(2, min(18, 720 // n_lanes))
    damaged = set(snap["fault"]["damaged_regions"])
    checked = 0
    for r in a["regions"]:
        x0, x1 = x(r["offset"]), x(r["offset"] + r["size_bytes"])
        row = 93 + lane_of.get(r["index"], 0) * lane_h  # the lane's first row: labels never cover it
        want = PALETTE["touched"] if r["index"] in damaged else PALETTE[r["kind"]]
        pixels = [image.getpixel((px, row)) for px in range(int(x0) - 1, int(x1) + 2)]
        assert any(p in family(want) for p in pixels) or (235, 235, 255) in pixels, (r["label"], pixels)
        checked += 1
    assert checked == len(a["regions"])
    bar = 63  # above the bar's labels
    assert image.getpixel((int(x(a["head_bytes"] / 2)), bar)) in family(PALETTE["tensor"])
    assert image.getpixel((int(x((a["temp_bytes"] + a["tail_offset"]) / 2)), bar)) == PALETTE["free"]
    assert image.getpixel((24 + 1552, bar)) != PALETTE["tensor"]  # nothing past the axis
    # The RAM column's stack, used through the guard band: orange somewhere in its rectangle.
    assert PALETTE["stack_used"] in set(image.crop((940, 300, 1100, 700)).getdata())


def test_the_html_holds_every_region_the_summary_and_the_fault_in_full(tmp_path):
    snap = json.loads(FAULT.read_text())
    html, _ = write_report(tmp_path, FAULT)
    text = html.read_text()
    assert not re.search(r'(src|href)\s*=\s*"(?!#)', text), "the report refers to another file"
    assert "<link" not in text and "@import" not in text and "url(" not in text
    dom = browser(tmp_path, html.as_uri(), "--dump-dom")
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", dom.split("<tbody>")[1])
    assert len(rows) == len(snap["arenas"][0]["regions"]) == 43
    for r, row in zip(snap["arenas"][0]["regions"], rows, strict=True):
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        assert cells[2] == r["label"] and cells[5] == f"+{r['offset']}" and cells[7] == str(r["size_bytes"]), cells
    plain = re.sub(r"<[^>]+>", "", dom).replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&")
    for c in snap["checks"]:
        assert c["rule"] in plain
        if c["verdict"] != "PASS":
            assert c["reason"] in plain  # whole, not cut
    for v in snap["fault"]["verdicts"]:
        assert v["headline"] in plain
    for bit in snap["fault"]["bits"]:
        assert bit in plain
    for hint in ("more below", "scroll", "wheel zoom", "drag pan", "double-click"):
        assert hint not in plain
    assert "Summary: verdict FAIL" in plain


def test_any_architectures_fault_registers_are_in_the_html(tmp_path):
    """Snapshot version 3: the report lists the fault's registers as the snapshot names them, a
    RISC-V trap's as well as Cortex-M's (the fixture's own, then a RISC-V fault in its place)."""
    snap = json.loads(FAULT.read_text())
    cortex = [r for r in snap["fault"]["registers"] if r["value"] is not None]
    snap["fault"].update(arch="riscv32", exception="store/AMO access fault",
                         source="core registers (halted in the trap handler, mtvec)", bits=[],
                         registers=[{"name": "mcause", "value": 7, "meaning": "exception 7, store/AMO access fault"},
                                    {"name": "mtval", "value": 0xFFFFFFC0, "meaning": "the faulting address"}],
                         fault_address={"register": "mtval", "value": 0xFFFFFFC0})
    rv = tmp_path / "rv32.json"
    rv.write_text(json.dumps(snap))
    for path, want in ((FAULT, [f"{r['name']} {r['value']:#010x}" for r in cortex]),
                       (rv, ["mcause 0x00000007: exception 7, store/AMO access fault",
                             "mtval 0xffffffc0: the faulting address", "(riscv32)"])):
        out = tmp_path / path.stem
        out.mkdir()
        html, _ = write_report(out, path)
        dom = browser(out, html.as_uri(), "--dump-dom")
        plain = re.sub(r"<[^>]+>", "", dom).replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&")
        for line in want:
            assert line in plain, (line, plain[plain.find("Fault"):][:2000])
        if path == rv:
            assert "CFSR" not in plain


def test_a_planted_temporary_name_is_never_written_through(tmp_path):
    """Issue 37: the viewer wrote FILE.tmp, a fixed name, and followed it when it was a link to
    another file (the victim was overwritten), and a 0600 report became 0644. It now writes through
    a unique temporary file (common/include/arenascope/write_whole.h) and keeps the file's mode."""
    import stat  # pylint: disable=import-outside-toplevel
    victim = tmp_path / "victim"
    victim.write_text("precious")
    html, svg = tmp_path / "report.html", tmp_path / "report.svg"
    for planted in (html, svg):
        (tmp_path / (planted.name + ".tmp")).symlink_to(victim)
    html.write_text("old")
    html.chmod(0o600)
    proc = subprocess.run([str(VIEWER), str(FAULT), "--report", str(html), "--svg", str(svg)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert victim.read_text() == "precious"
    assert stat.S_IMODE(html.stat().st_mode) == 0o600 and html.read_text().startswith("<!DOCTYPE html>")
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".arenascope-")]


def test_the_filter_hides_the_rows_that_do_not_match(tmp_path):
    html, _ = write_report(tmp_path, FAULT)
    dom = browser(tmp_path, html.as_uri() + "#filter=scratch%2013", "--dump-dom")
    body = dom.split("<tbody>")[1]
    shown = [row for row in re.findall(r"<tr([^>]*)>(.*?)</tr>", body) if "hidden" not in row[0]]
    assert len(shown) == 1 and "scratch 13" in shown[0][1]
    assert "1 of 43 shown" in dom


def test_a_hostile_label_stays_text(tmp_path):
    snap = json.loads(FAULT.read_text())
    snap["arenas"][0]["regions"][0]["label"] = '<script>document.title="owned"</script><img src=x onerror=1>'
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(snap))
    html, svg = write_report(tmp_path, path)
    dom = browser(tmp_path, html.as_uri(), "--dump-dom")
    assert dom.count("<script>") == 1 and "<img" not in dom  # the report's own filter script only
    assert "&lt;script&gt;document.title" in dom and "<title>arenascope report" in dom
    assert "<script>" not in svg.read_text()


def test_bad_input_is_refused():
    proc = subprocess.run([str(VIEWER), "--report", "/tmp/x.html"], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "--report and --svg read a snapshot file" in proc.stderr
    proc = subprocess.run([str(VIEWER), str(FAULT), "--report", "/nonexistent-dir/r.html"], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 2 and "cannot write /nonexistent-dir/r.html: No such file" in proc.stderr
