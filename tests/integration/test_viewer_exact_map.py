"""The exact map in a real window under Xvfb: 16 B regions beside 64 KiB ones, at several zooms
and widths. Every region has at least one pixel in its colour (or its edge shade) within the
pixels its bytes fall in, or is counted in a cluster mark; the axis is whole pixels and nothing
is drawn past it; a region's first pixel is its own; off-screen pictures carry no interactive
hints and label the bars where the label fits.

The snapshot is built here by hand (and checked against docs/snapshot-schema.json); pixel
positions come from this file's own arithmetic on the layout the viewer reports."""
import json
import math

import pytest

from harness import ROOT
from test_viewer import PALETTE, VIEWER, bar_row, display, family, render  # noqa: F401 (display: fixture)

BASE = 0x20000000
CLUSTER = (235, 235, 255)  # viewer/README.md: the too-small mark


def region(index, kind, offset, size, label, first=None, last=None):
    return {"index": index, "id": index if kind in ("tensor", "scratch") else None, "kind": kind, "offset": offset,
            "address": BASE + offset, "size_bytes": size, "first_use": first, "last_use": last, "flags": [],
            "label": label, "name": None, "shape": None, "dtype": None}


def tiny_beside_huge():
    """Head: tensor 0 [0, 65536), scratch 0 (16 B), tensor 2 [65552, 131088); temp 16 B; free
    band 48 B; tail: metadata 16 B, persistent 65520 B. 196688 B in all."""
    snap = json.loads((ROOT / "tests" / "fixtures" / "demo_overrun_snapshot.json").read_text())
    head, temp, tail = 131088, 131104, 131152
    size = tail + 16 + 65520
    regions = [region(0, "tensor", 0, 65536, "tensor 0", 1, 1), region(1, "scratch", 65536, 16, "scratch 0", 1, 1),
               region(2, "tensor", 65552, 65536, "tensor 2", 1, 1), region(3, "metadata", tail, 16, "metadata"),
               region(4, "persistent", tail + 16, 65520, "tensor 4 (persistent)")]
    a = snap["arenas"][0]
    a.update(base_addr=BASE, size_bytes=size, head_bytes=head, temp_bytes=temp, tail_offset=tail,
             tail_bytes=size - tail, used_bytes=head + size - tail, peak_bytes=temp + size - tail,
             headroom_bytes=48, headroom_pct=round(100 * 48 / (temp + size - tail), 2), regions=regions,
             region_capacity=8, damage=None,
             free_band={"low_addr": BASE + temp, "high_addr": BASE + tail, "size_bytes": 48, "measured": True,
                        "intact_bytes": 48, "touched": None, "offset": temp},
             plan={"scopes": 2, "live_bytes": [0, head], "live_regions": [[], [0, 1, 2]],
                   "lower_bound_bytes": head, "lower_bound_scope": 1})
    end = BASE + size
    snap["guard"].update(low_addr=end, high_addr=end + 256)
    st = snap["stack"]
    st.update(low_addr=end + 256, high_addr=end + 256 + 8192, sp=end + 256 + 8000, hwm_addr=end + 256 + 7992,
              arena_end_addr=end, room_bytes=8192 + 256 - 200, peak_bytes=200)
    return snap


def x_range(layout, off, size):
    """Window pixels [x0, x1) holding bytes [off, off+size), one pixel of slack each side."""
    a = layout["axis"]
    scale = a["pw"] / (a["view_hi"] - a["view_lo"])
    x0 = a["px0"] + (BASE + off - a["view_lo"]) * scale
    x1 = a["px0"] + (BASE + off + size - a["view_lo"]) * scale
    return max(int(a["px0"]), math.floor(x0) - 1), min(int(a["px0"] + a["pw"]), math.ceil(x1) + 1)


@pytest.fixture(scope="module")
def snapshot_file(tmp_path_factory):
    snap = tiny_beside_huge()
    try:
        import jsonschema
        jsonschema.validate(snap, json.loads((ROOT / "docs" / "snapshot-schema.json").read_text()))
    except ImportError:
        pass
    path = tmp_path_factory.mktemp("exact") / "tiny_beside_huge.json"
    path.write_text(json.dumps(snap))
    return path, snap


@pytest.mark.parametrize("size,zoom,center", [("1280x800", 1, None), ("1920x800", 1, None), ("8192x800", 1, None),
                                              ("1280x800", 4, 131100), ("1280x800", 64, 65544),
                                              ("1280x800", 3000, 131110)])
def test_every_small_region_is_drawn_or_counted(snapshot_file, size, zoom, center):
    path, snap = snapshot_file
    args = ["--zoom", str(zoom)] + (["--center", str(center)] if center is not None else [])
    proc, image, layout = render(path, args=args, size=size)
    assert proc.returncode == 0, proc.stderr
    a, ax = snap["arenas"][0], layout["axis"]
    assert ax["px0"] == int(ax["px0"]) and ax["pw"] == int(ax["pw"])  # whole pixels: an exact axis
    assert ax["view_hi"] - ax["view_lo"] == pytest.approx(a["size_bytes"] / zoom)
    bytes_a_pixel = (ax["view_hi"] - ax["view_lo"]) / ax["pw"]
    top, lane_h = layout["lanes"]["top"], layout["lanes"]["lane_h"]
    lane_of = {0: 1, 1: 1, 2: 1, 3: 0, 4: 0}  # tail in lane 0; the three head regions fit lane 1
    clustered = {i for c in layout["map_picture"]["clusters"] for i in c["regions"]}
    bar_y = bar_row(layout)
    checks = [(r["label"], int(top + lane_of[r["index"]] * lane_h), r["offset"], r["size_bytes"], PALETTE[r["kind"]],
               r["index"]) for r in a["regions"]]
    checks += [("temp", bar_y, a["head_bytes"], 16, PALETTE["temp"], None),
               ("free band", bar_y, a["temp_bytes"], 48, PALETTE["free"], None),
               ("metadata (bar)", bar_y, a["tail_offset"], 16, PALETTE["metadata"], 3)]
    seen = 0
    for what, y, off, size_b, colour, index in checks:
        lo, hi = BASE + off, BASE + off + size_b
        if hi <= ax["view_lo"] or lo >= ax["view_hi"]:
            continue  # out of view
        x0, x1 = x_range(layout, off, size_b)
        pixels = [image.getpixel((x, y)) for x in range(x0, x1)]
        own = any(p in family(colour) for p in pixels)
        if bytes_a_pixel <= 16:
            assert own, (what, size, zoom, pixels)
        else:
            assert own or (CLUSTER in pixels and (index is None or index in clustered)), (what, size, zoom, pixels)
        seen += 1
    assert seen >= 3
    if bytes_a_pixel <= 16:
        assert layout["map_picture"]["hidden"] == 0
    # Nothing past the axis: the pixel right of the last one is the map's background.
    right = int(ax["px0"] + ax["pw"])
    assert image.getpixel((right - 1, bar_y)) != PALETTE["background"]
    assert image.getpixel((right, bar_y)) == PALETTE["background"]


def test_first_pixel_is_the_owners_and_bars_are_labelled_without_hints(snapshot_file):
    path, snap = snapshot_file
    proc, image, layout = render(path)
    assert proc.returncode == 0, proc.stderr
    ax, top = layout["axis"], layout["lanes"]["top"]
    lane_h = layout["lanes"]["lane_h"]
    assert image.getpixel((int(ax["px0"]), int(top + lane_h))) == PALETTE["tensor"]  # tensor 0's first pixel
    assert image.getpixel((int(ax["px0"]), bar_row(layout))) == PALETTE["tensor"]     # the head's
    labels = {label["text"] for label in layout["map_picture"]["labels"]}
    assert {"tensor 0", "tensor 2", "head"} <= labels, labels
    assert "scratch 0" not in labels  # 16 B: no room
    assert "wheel zoom" not in layout["map_title"] and "drag" not in layout["map_title"]
    assert "too small to tell apart" in layout["map_title"]  # 196688 B over ~700 px: the 80 B are one mark


def test_view_options_are_checked():
    for args, message in ((["--zoom", "0.5"], "--zoom 0.5: expected a factor from 1"),
                          (["--center", "-4"], "--center -4: expected an offset in bytes"),
                          (["--zoom", "x"], "--zoom x: expected")):
        proc, _, _ = render(ROOT / "tests" / "fixtures" / "demo_overrun_snapshot.json", args=args)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr


def test_two_arenas_are_drawn_one_above_the_other_each_on_its_own_axis(tmp_path):
    """A two-arena snapshot (docs/two-arenas.md): both maps at once, each with its own axis and
    regions; the plan, the RAM column and the summary show the chosen one (--arena)."""
    snap = json.loads((ROOT / "tests" / "fixtures" / "demo_overrun_snapshot.json").read_text())
    first = snap["arenas"][0]
    other = json.loads(json.dumps(first))
    other.update(index=1, base_addr=first["base_addr"] + 0x10000, size_bytes=8192, tail_offset=8192 - 1024,
                 tail_bytes=1024, damage=None, free_band=None,
                 regions=[dict(region(0, "persistent", 8192 - 1024, 1024, "persistent"),
                               address=first["base_addr"] + 0x10000 + 8192 - 1024)])
    scopes = first["plan"]["scopes"]
    other.update(head_bytes=0, temp_bytes=0, used_bytes=1024, peak_bytes=1024,
                 plan={"scopes": scopes, "live_bytes": [0] * scopes, "live_regions": [[] for _ in range(scopes)],
                       "lower_bound_bytes": 0, "lower_bound_scope": 0})
    snap["arenas"].append(other)
    path = tmp_path / "two.json"
    path.write_text(json.dumps(snap))
    for chosen in (0, 1):
        proc, image, layout = render(path, args=("--arena", str(chosen)))
        assert proc.returncode == 0, proc.stderr
        maps = layout["maps"]
        assert [m["arena"] for m in maps] == [0, 1] and layout["arena_shown"] == chosen
        assert maps[0]["rect"]["y"] + maps[0]["rect"]["h"] <= maps[1]["rect"]["y"]  # one above the other
        for m, a in zip(maps, snap["arenas"], strict=True):
            ax = m["axis"]
            assert (ax["view_lo"], ax["view_hi"]) == (a["base_addr"], a["base_addr"] + a["size_bytes"])
            y = int(m["area_bar"]["y0"]) + 2
            tail_x = int(ax["px0"] + (a["tail_offset"] + a["size_bytes"]) / 2 / a["size_bytes"] * ax["pw"])
            assert image.getpixel((tail_x, y)) in family(PALETTE["persistent"]) + family(PALETTE["metadata"])
        # arena 1 has no free band: its bar's middle is "free, no canary"; arena 0's is the canary's green
        m1 = maps[1]
        x = int(m1["axis"]["px0"] + m1["axis"]["pw"] * 0.5)
        assert image.getpixel((x, int(m1["area_bar"]["y0"]) + 2)) == PALETTE["free_unmeasured"]
        size_line = next(line for line in layout["summary_lines"] if line.startswith("size"))
        assert str(snap["arenas"][chosen]["size_bytes"]) in size_line
        assert layout["axis"] == maps[chosen]["axis"]
