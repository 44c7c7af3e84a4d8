"""Compare mode (`arenascope-viewer B --before A --diff D`, what `arena diff A B --view` starts) in
a real window under Xvfb: A's map above B's, each on its own axis, and the regions the plugin's
diff names (the real `arenascope diff --json`) striped along their lane's bottom in both, at each
side's own offset; the diff's summary heads the summary panel."""
import json
import subprocess

from harness import ROOT
from test_viewer import PALETTE, display, lanes, render  # noqa: F401 (display: the module's Xvfb fixture)

FIXTURE = ROOT / "tests" / "fixtures" / "demo_overrun_snapshot.json"
TOOL = ROOT / "gdbplugin" / "arenascope"
CHANGED = (255, 40, 220)  # viewer/README.md: the diff stripe


def pair(tmp_path):
    a = json.loads(FIXTURE.read_text())
    b = json.loads(FIXTURE.read_text())
    moved = b["arenas"][0]["regions"][1]  # tensor 5: +608 -> +624
    moved["offset"] += 16
    moved["address"] += 16
    b["arenas"][0]["regions"][2]["size_bytes"] = 32  # tensor 8: 16 B -> 32 B
    pa, pb, pd = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "d.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    proc = subprocess.run(["/usr/bin/python3", str(TOOL), "diff", str(pa), str(pb), "--json"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr  # diff(1)'s status: different
    pd.write_text(proc.stdout)
    return a, b, pa, pb, pd


def test_both_maps_and_the_changes_striped_at_each_sides_offset(tmp_path):
    a, b, pa, pb, pd = pair(tmp_path)
    proc, image, layout = render(pb, args=("--before", str(pa), "--diff", str(pd), "--zoom", "12", "--center", "640"),
                                 size="1600x1200")
    assert proc.returncode == 0, proc.stderr
    maps = layout["maps"]
    assert [(m["arena"], m["before"]) for m in maps] == [(0, True), (0, False)]
    assert maps[0]["map_title"].startswith("BEFORE a.json") and maps[1]["map_title"].startswith("AFTER b.json")
    assert layout["summary_lines"][0].startswith("DIFF (stripe on the map): differences: 0 figure(s), 2 region(s)")

    def rows(m, snap, index):
        lane = lanes(snap["arenas"][0]["regions"]).get(index, 0)
        top = m["lanes"]["top"] + lane * m["lanes"]["lane_h"]
        return int(top), int(top + m["lanes"]["lane_h"] - 2)  # first row, last drawn row

    def xs(m, snap, index):
        r = snap["arenas"][0]["regions"][index]
        ax = m["axis"]
        x0 = ax["px0"] + (snap["arenas"][0]["base_addr"] + r["offset"] - ax["view_lo"]) / (
            ax["view_hi"] - ax["view_lo"]) * ax["pw"]
        x1 = x0 + r["size_bytes"] / (ax["view_hi"] - ax["view_lo"]) * ax["pw"]
        return range(int(x0) + 1, int(x1) - 1)

    for m, snap in ((maps[0], a), (maps[1], b)):
        for index in (1, 2):  # tensor 5 moved, tensor 8 grew: striped on both sides
            top, bottom = rows(m, snap, index)
            assert any(image.getpixel((x, bottom)) == CHANGED for x in xs(m, snap, index)), (m["map_title"], index)
            assert image.getpixel((xs(m, snap, index)[0], top)) == PALETTE["tensor"]  # above the stripe: its colour
        top, bottom = rows(m, snap, 0)  # tensor 0 did not change: no stripe
        assert not any(image.getpixel((x, bottom)) == CHANGED for x in xs(m, snap, 0))
    # The moved tensor is drawn at +608 before and +624 after: its first pixels differ by 16 B.
    shift = xs(maps[1], b, 1)[0] - xs(maps[0], a, 1)[0]
    assert abs(shift - 16 / (maps[1]["axis"]["view_hi"] - maps[1]["axis"]["view_lo"]) * maps[1]["axis"]["pw"]) <= 1


def test_compare_options_are_checked(tmp_path):
    _, _, pa, pb, _ = pair(tmp_path)
    cases = ((["--diff", str(pa)], "--diff marks the changes between --before A.json and the snapshot"),
             (["--before", str(pa), "--diff", str(pa)], "not an arenascope diff"),
             (["--before", str(tmp_path / "missing.json")], "--before: "))
    d = json.loads((tmp_path / "d.json").read_text())
    d["arenas"][0]["regions"]["changed"][0]["b"]["index"] = 999  # a diff of other snapshots
    (tmp_path / "other.json").write_text(json.dumps(d))
    cases += ((["--before", str(pa), "--diff", str(tmp_path / "other.json")],
               "names region 999 of arena 0, which the snapshot does not hold: it is not the diff of these two"),)
    for args, message in cases:
        proc, _, _ = render(pb, args=args)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_arenascope_diff_view_starts_the_viewer_on_both_or_says_why_not(tmp_path):
    import os
    import signal

    from test_viewer import DISPLAY_ENV
    _, _, pa, pb, _ = pair(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.run(["/usr/bin/python3", str(TOOL), "diff", str(pa), str(pb), "--view"], capture_output=True,
                          text=True, timeout=60, env=env)
    assert proc.returncode == 2 and "no display (DISPLAY is not set): not starting the viewer" in proc.stderr
    proc = subprocess.run(["/usr/bin/python3", str(TOOL), "diff", str(pa), str(pb), "--view"], capture_output=True,
                          text=True, timeout=60, env=DISPLAY_ENV)
    assert proc.returncode == 1, proc.stderr  # the diff's status: different
    line = next(t for t in proc.stderr.splitlines() if t.startswith("arenascope diff: started "))
    cmd = line.removeprefix("arenascope diff: started ").split()
    assert cmd[1:4] == [str(pb), "--before", str(pa)] and cmd[4] == "--diff"
    assert json.loads(open(cmd[5], encoding="utf-8").read())["schema"] == "arenascope.diff"
    found = subprocess.run(["pgrep", "-f", cmd[5]], capture_output=True, text=True).stdout.split()
    assert found, "the viewer is not running"
    for pid in found:
        os.kill(int(pid), signal.SIGTERM)
