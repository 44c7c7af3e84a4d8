"""The viewer in a real window under Xvfb + Mesa (llvmpipe): pixel colours at positions computed
here from the snapshot, malformed snapshots, and the live link from GDB + plugin + QEMU.

Positions: the viewer reports its panel rectangles and axis ranges (--layout-out); the test maps
addresses and scopes to pixels itself and computes region lanes with its own first-fit, so a
wrong mapping or lane in the viewer shows up as a wrong colour. Colours: the palette of
viewer/README.md."""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from harness import BUILD, FIRMWARE, ROOT, demo_plan, gdb_batch, qemu, xvfb

VIEWER = BUILD / "viewer" / "arenascope-viewer"
FIXTURE = ROOT / "tests" / "fixtures" / "demo_overrun_snapshot.json"
PALETTE = {  # viewer/README.md
    "tensor": (66, 135, 245), "scratch": (186, 85, 211), "temp": (240, 200, 60), "persistent": (0, 170, 170),
    "metadata": (128, 128, 128), "free": (40, 110, 40), "free_unmeasured": (70, 80, 70), "touched": (230, 40, 40),
    "hwm": (255, 255, 255),
    "stack_used": (255, 140, 0), "stack_unused": (70, 70, 100), "guard": (200, 200, 200),
    "history_used": (120, 200, 255), "history_stack_peak": (255, 120, 170), "history_gap": (150, 230, 90),
    "background": (24, 24, 28),
}

pytestmark = [pytest.mark.skipif(not VIEWER.exists(), reason="viewer not built"),
              pytest.mark.skipif(shutil.which("Xvfb") is None, reason="Xvfb not installed")]

DISPLAY_ENV = {}


@pytest.fixture(scope="module", autouse=True)
def display():
    with xvfb() as env:
        DISPLAY_ENV.update(env)
        yield


def render(snapshot_path=None, args=(), timeout=120, size="1280x800"):
    with tempfile.TemporaryDirectory() as tmp:
        png, lay = os.path.join(tmp, "shot.png"), os.path.join(tmp, "layout.json")
        cmd = [str(VIEWER)]
        cmd += [str(snapshot_path)] if snapshot_path else []
        cmd += ["--screenshot", png, "--layout-out", lay, *(["--size", size] if size else []), *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=DISPLAY_ENV)
        image = layout = None
        if os.path.exists(png):
            from PIL import Image
            image = Image.open(png).convert("RGB")
            image.load()
        if os.path.exists(lay):
            with open(lay, encoding="utf-8") as f:
                layout = json.load(f)
        return proc, image, layout


def lanes(regions):
    """The documented lane rule: tail regions in lane 0; head regions first-fit by offset."""
    out, ends = {}, []
    for r in sorted((r for r in regions if r["kind"] in ("tensor", "scratch")), key=lambda r: r["offset"]):
        lane = next((i for i, e in enumerate(ends) if e <= r["offset"]), None)
        if lane is None:
            ends.append(0)
            lane = len(ends) - 1
        ends[lane] = max(ends[lane], r["offset"] + max(r["size_bytes"], 1))
        out[r["index"]] = lane + 1
    return out


def bar_row(layout):
    """A row of the area bar above its labels (13 px text, centred in the 26 px bar)."""
    return int(layout["area_bar"]["y0"]) + 2


def family(colour):
    """A region's colour and its edge shade (its last column when 4 px or wider: 60 %,
    viewer/README.md)."""
    return colour, tuple(c * 3 // 5 for c in colour)


def x_of(layout, addr):
    a = layout["axis"]
    return a["px0"] + (addr - a["view_lo"]) / (a["view_hi"] - a["view_lo"]) * a["pw"]


@pytest.fixture(scope="module")
def shot(display):
    proc, image, layout = render(FIXTURE)
    assert proc.returncode == 0, proc.stderr
    return json.loads(FIXTURE.read_text()), image, layout


def test_regions_have_their_kind_colour_where_they_are(shot):
    assert region_colours_checked(*shot) >= 8


def region_colours_checked(snap, image, layout):
    """Samples the middle of every region wide enough in its lane; returns how many were checked."""
    a = snap["arenas"][0]
    lane_of = lanes(a["regions"])
    top, lane_h = layout["lanes"]["top"], layout["lanes"]["lane_h"]
    checked = 0
    for r in a["regions"]:
        x0 = x_of(layout, a["base_addr"] + r["offset"])
        x1 = x_of(layout, a["base_addr"] + r["offset"] + r["size_bytes"])
        if x1 - x0 < 4:
            continue  # too thin to sample a pixel left of its edge-shaded last column
        lane = lane_of.get(r["index"], 0)
        y = int(top + lane * lane_h)  # the lane's first row: a label (13 px, centred) never covers it
        assert image.getpixel((int((x0 + x1) / 2), y)) == PALETTE[r["kind"]], (r["label"], lane)
        checked += 1
    return checked


def test_offline_planned_regions_carry_a_stripe(tmp_path):
    """A region flagged "offline" (placed by the model's OfflineMemoryAllocation): its top fifth of
    the lane, inside the 1 px frame, in the stripe colour (viewer/README.md); its middle in its
    kind's colour; an unflagged tensor has no stripe."""
    snap = json.loads(FIXTURE.read_text())
    a = snap["arenas"][0]
    tensors = sorted((r for r in a["regions"] if r["kind"] == "tensor"), key=lambda r: -r["size_bytes"])
    marked, plain = tensors[0], tensors[1]
    marked["flags"] = sorted(set(marked["flags"]) | {"offline"})
    plain["flags"] = [f for f in plain["flags"] if f != "offline"]
    path = tmp_path / "offline.json"
    path.write_text(json.dumps(snap))
    proc, image, layout = render(path)
    assert proc.returncode == 0, proc.stderr
    top, lane_h = layout["lanes"]["top"], layout["lanes"]["lane_h"]
    assert lane_h >= 10  # a stripe of at least 2 rows
    lane_of = lanes(a["regions"])
    for r, striped in ((marked, True), (plain, False)):
        x = int((x_of(layout, a["base_addr"] + r["offset"]) +
                 x_of(layout, a["base_addr"] + r["offset"] + r["size_bytes"])) / 2)
        y0 = top + lane_of[r["index"]] * lane_h
        assert image.getpixel((x, int(y0 + 1.5))) == ((255, 255, 160) if striped else PALETTE["tensor"]), r["label"]
        assert image.getpixel((x, int(y0 + (lane_h - 1) / 2))) == PALETTE["tensor"], r["label"]


def test_area_bar_shows_head_free_damage_and_tail(shot):
    snap, image, layout = shot
    a = snap["arenas"][0]
    y = bar_row(layout)

    def px(off):
        return image.getpixel((int(x_of(layout, a["base_addr"] + off)), y))

    assert px(a["head_bytes"] // 2) == PALETTE["tensor"]
    assert px(2500) == PALETTE["free"]                                    # canary intact
    assert px(a["damage"]["offset"] + a["damage"]["size_bytes"] // 2) == PALETTE["touched"]
    meta = next(r for r in a["regions"] if r["kind"] == "metadata" and r["size_bytes"] > 400)
    assert px(meta["offset"] + meta["size_bytes"] // 2) == PALETTE["metadata"]


def test_ram_column_has_the_high_water_mark_where_it_belongs(shot):
    snap, image, layout = shot
    col = layout["ram_column"]
    lo, hi, r = col["lo"], col["hi"], col["rect"]

    def y_of(addr):
        return r["y"] + r["h"] - (addr - lo) / (hi - lo) * r["h"]

    x = int(r["x"] + r["w"] / 2)
    hwm = snap["stack"]["hwm_addr"]
    assert PALETTE["hwm"] in [image.getpixel((x, int(y_of(hwm)) + d)) for d in (-1, 0, 1)]
    assert image.getpixel((x, int(y_of((snap["stack"]["low_addr"] + hwm) / 2)))) == PALETTE["stack_unused"]
    guard = snap["guard"]
    assert image.getpixel((x, int(y_of((guard["low_addr"] + guard["high_addr"]) / 2)))) == PALETTE["guard"]
    a = snap["arenas"][0]
    assert image.getpixel((x, int(y_of(a["base_addr"] + 3000)))) == PALETTE["free"]


def test_plan_view_rectangles_span_lifetimes(shot):
    snap, image, layout = shot
    a = snap["arenas"][0]
    pa = layout["plan_area"]
    r = pa["rect"]
    t0 = next(x for x in a["regions"] if x["label"] == "tensor 0")  # scopes 1..2, +512..+608
    x = r["x"] + (t0["first_use"] + 0.3) / pa["scopes"] * r["w"]    # inside its first scope, off the curve
    y = r["y"] + (t0["offset"] + t0["size_bytes"] / 2) / pa["extent"] * r["h"]
    assert image.getpixel((int(x), int(y))) == PALETTE["tensor"]
    s = next(x for x in a["regions"] if x["kind"] == "scratch" and x["offset"] == 256 and x["first_use"] == 4)
    x = r["x"] + (s["first_use"] + 0.5) / pa["scopes"] * r["w"]
    y = r["y"] + (s["offset"] + s["size_bytes"] / 2) / pa["extent"] * r["h"]
    assert image.getpixel((int(x), int(y))) == PALETTE["scratch"]


# A live snapshot's history (`arena live`), hand-made: 100 refreshes 50 ms apart, each series a
# step between two plateaus, the stack peak unknown in the middle.
T0, N = 1764511230.0, 100
USED = [4000 if i < 50 else 8000 for i in range(N)]
PEAK = [300 if i < 40 else None if i < 60 else 600 for i in range(N)]
GAP = [5000 if i < 70 else -1000 for i in range(N)]


def live_snapshot(tmp_path, captured_at, link="ok", link_error=None):
    snap = json.loads(FIXTURE.read_text())
    snap["live"] = {
        "reader": "OpenOCD Tcl RPC 127.0.0.1:6666", "captured_at_unix_s": captured_at, "refresh_index": 1234,
        "refresh_hz": 21.3, "bytes_last_refresh": 412, "link": link, "link_error": link_error,
        "history": [{"t_unix_s": T0 + 0.05 * i, "used_bytes": USED[i], "stack_peak_bytes": PEAK[i],
                     "gap_bytes": GAP[i]} for i in range(N)]}
    path = tmp_path / "live.json"
    path.write_text(json.dumps(snap))
    return snap, path


def status_pixels(image, layout):
    r = layout["status"]["rect"]
    return list(image.crop((int(r["x"]), int(r["y"]), int(r["x"] + r["w"]), int(r["y"] + r["h"]))).getdata())


def near(image, x, y, colour, rows=2):
    """The colour within `rows` pixel rows of (x, y): a 2 px line lands on the rows around its y."""
    return colour in [image.getpixel((int(x), int(y) + d)) for d in range(-rows, rows + 1)]


def test_live_history_lines_are_where_their_values_map_and_the_status_says_rate_and_age(tmp_path):
    """Positions from the panel's plot and lane rectangles (--layout-out) and the documented
    mapping, computed here: time across from the first point to the last; each lane from
    min(0, least) at its bottom to max(0, greatest) at its top."""
    import re
    import time

    import jsonschema
    captured = time.time() - 2.0
    snap, path = live_snapshot(tmp_path, captured)
    jsonschema.validate(snap, json.loads((ROOT / "docs" / "snapshot-schema.json").read_text()))
    before = time.time()
    proc, image, layout = render(path)
    after = time.time()
    assert proc.returncode == 0, proc.stderr
    assert region_colours_checked(snap, image, layout) >= 8  # the map is unchanged by the panel
    h, plan = layout["history"], layout["plan"]
    assert h["rect"]["y"] >= plan["y"] + plan["h"] and h["rect"]["y"] + h["rect"]["h"] <= 800 - 8 + 0.01
    plot = h["plot"]

    def x(i):
        return plot["x"] + (0.05 * i) / (0.05 * (N - 1)) * plot["w"]

    for k, (name, values) in enumerate((("used", USED), ("stack peak", PEAK), ("gap", GAP))):
        lane = h["lanes"][k]
        assert lane["series"] == name
        known = [v for v in values if v is not None]
        lo, hi = min(0, *known), max(0, *known)
        assert (lane["lo"], lane["hi"]) == (lo, hi), name
        r = lane["rect"]

        def y(v, r=r, lo=lo, hi=hi):  # bound now: this lane's rect and range
            return r["y"] + (hi - v) / (hi - lo) * r["h"]

        colour = PALETTE["history_" + name.replace(" ", "_")]
        first, last = values[0], values[-1]
        for i, v, other in ((15, first, last), (90, last, first)):  # inside each plateau, off the step
            assert near(image, x(i), y(v), colour), (name, i, v)
            assert not near(image, x(i), y(other), colour), (name, i, other)
        if name == "stack peak":  # unknown from point 40 to 59: no line in the lane there
            column = [image.getpixel((int(x(50)), yy)) for yy in range(int(r["y"]) - 2, int(r["y"] + r["h"]) + 3)]
            assert colour not in column
    # The status line: rate, age (the viewer's clock minus captured_at, one decimal), refresh.
    status = layout["status"]
    m = re.match(r"live via OpenOCD Tcl RPC 127\.0\.0\.1:6666: 21\.3 refreshes/s, data (\d+\.\d) s old, "
                 r"refresh 1234", status["text"])
    assert m, status["text"]
    assert before - captured - 0.05 <= float(m.group(1)) <= after - captured + 0.05, (m.group(1), before - captured)
    assert not status["lost"]
    pixels = status_pixels(image, layout)
    assert sum(p != PALETTE["background"] for p in pixels) > 500, "no status text drawn"
    assert PALETTE["touched"] not in pixels  # red only when the link is lost


def test_live_link_lost_is_said_in_red_with_the_data_age(tmp_path):
    import time
    captured = time.time() - 30.0
    _, path = live_snapshot(tmp_path, captured, link="lost", link_error="OpenOCD closed the connection")
    proc, image, layout = render(path)
    assert proc.returncode == 0, proc.stderr
    status = layout["status"]
    assert status["lost"] and status["text"].startswith(
        "LINK LOST: OpenOCD closed the connection; showing data "), status["text"]
    age = float(status["text"].split("showing data ")[1].split(" s old")[0])
    assert 30.0 <= age < 150, age
    assert sum(p == PALETTE["touched"] for p in status_pixels(image, layout)) > 200, "the lost link is not in red"
    assert "history" in layout  # the last good history stays on screen


def test_schema_holds_the_live_contract(tmp_path):
    """docs/snapshot-schema.json: "live" is optional, null or the object with its limits."""
    import jsonschema
    schema = json.loads((ROOT / "docs" / "snapshot-schema.json").read_text())
    snap, _ = live_snapshot(tmp_path, 1764511234.125)
    jsonschema.validate(snap, schema)
    jsonschema.validate(dict(snap, live=None), schema)
    point = snap["live"]["history"][0]
    for bad in ({"link": "down"}, {"refresh_index": 0}, {"refresh_hz": -1}, {"bytes_last_refresh": 1.5},
                {"link_error": 3}, {"history": [point] * 601}, {"history": [dict(point, used_bytes=-1)]},
                {"history": [{k: v for k, v in point.items() if k != "gap_bytes"}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(dict(snap, live=dict(snap["live"], **bad)), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(dict(snap, live="yes"), schema)


def rtos_tasks():
    """Three FreeRTOS tasks as the plugin writes them (docs/snapshot-schema.md, "tasks"): one fine,
    one whose stack overflowed (its fill gone down to pxStack), one never scanned."""
    def task(name, state, prio, low, high, **figures):
        t = {"name": name, "tcb_addr": 0x20000100 + prio, "state": state, "priority": prio, "low_addr": low,
             "high_addr": high, "high_source": "pxEndOfStack", "sp": high - 64, "sp_live": False, "hwm_addr": None,
             "never_used_bytes": None, "peak_bytes": None, "peak_is_lower_bound": False, "overflowed": False,
             "below": "an ELF object", "arena_index": None, "room_bytes": None, "required_room_bytes": None,
             "problems": []}
        t.update(figures)
        return t
    return {"kernel": "FreeRTOS", "current_tcb": 0x20000102, "problems": [], "list": [
        task("main", "running", 2, 0x20008000, 0x20008800, hwm_addr=0x20008400, never_used_bytes=1024,
             peak_bytes=1024),
        task("infer", "blocked", 1, 0x20009000, 0x20009400, hwm_addr=0x20009000, never_used_bytes=0,
             peak_bytes=1024, peak_is_lower_bound=True, overflowed=True),
        task("IDLE", "ready", 0, 0x2000a000, 0x2000a100)]}


def test_rtos_tasks_panel_shows_each_task_and_the_overflow_in_red(tmp_path):
    """The snapshot's tasks in their own panel above the legend: its rectangle from the layout
    rules (right column x 8 + 736 + 8 + 179.2 + 8 = 939.2, 332.8 wide; 10 lines of 16 px, 3 px above
    each task, 12 px of padding and a line's room for the "more below" mark: 197 px; the legend
    keeps its 248 px, the summary gives up the rest),
    its lines as the figures say, and the overflowed task's line in the failure red."""
    snap = json.loads(FIXTURE.read_text())
    snap["tasks"] = rtos_tasks()
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(snap))
    proc, image, layout = render(path)
    assert proc.returncode == 0, proc.stderr
    r = layout["tasks"]["rect"]
    assert (r["x"], r["w"], r["h"]) == pytest.approx((939.2, 332.8, 197), abs=1e-3)
    assert r["y"] == pytest.approx(38 + (754 - 197 - 248 - 16) + 8, abs=1e-3)
    assert layout["legend"]["y"] == pytest.approx(r["y"] + 197 + 8, abs=1e-3)
    assert layout["tasks"]["lines"] == [
        "RTOS tasks (FreeRTOS): 3",
        "main  running p2", "stack 0x20008000..0x20008800", "peak 1024 B  HWM 0x20008400",
        "infer  blocked p1  OVERFLOW", "stack 0x20009000..0x20009400", "peak >= 1024 B  HWM 0x20009000",
        "IDLE  ready p0", "stack 0x2000a000..0x2000a100", "peak unknown  HWM ?"]
    assert not layout["tasks"]["more"]
    # In pixels: the text starts 4 px in (border, padding); a line is 16 px, a task's headline has
    # 3 px above it. infer's headline (the 5th line) is red, nothing above it in the panel is.
    top = int(r["y"]) + 4
    infer = top + 16 + 3 + 3 * 16 + 3
    x0, x1 = int(r["x"]) + 2, int(r["x"] + r["w"]) - 2
    red = PALETTE["touched"]  # the failure red (Style's RuleFail)
    assert sum(image.getpixel((x, y)) == red for x in range(x0, x1) for y in range(infer, infer + 13)) > 50
    assert not any(image.getpixel((x, y)) == red for x in range(x0, x1) for y in range(int(r["y"]) + 1, infer - 1))
    assert "RTOS tasks not shown" not in layout["status"]["text"]


def test_many_rtos_tasks_grow_a_screenshot_only_as_far_as_they_need(tmp_path):
    """Four tasks or more made a screenshot of its own size grow to 8192 px, every panel stretched
    and the tasks still cut (the "more below" mark took the last line's room, so the panel never
    fitted and the window kept growing). Eight tasks: 25 lines, 3 px above each of the 8, 12 px of
    padding and 16 px for the mark: 25 x 16 + 24 + 12 + 16 = 452 px, shown whole; the window grows
    by 160 px at a time until 30 % of the column holds them: (h - 46) x 0.3 >= 452 first at 1600."""
    snap = json.loads(FIXTURE.read_text())
    snap["tasks"] = rtos_tasks()
    snap["tasks"]["list"] = [dict(snap["tasks"]["list"][2], name=f"t{k}", tcb_addr=0x20000100 + k) for k in range(8)]
    path = tmp_path / "eight_tasks.json"
    path.write_text(json.dumps(snap))
    proc, image, layout = render(path, size=None)
    assert proc.returncode == 0, proc.stderr
    assert image.size == (1280, 1600), image.size
    assert layout["tasks"]["rect"]["h"] == pytest.approx(452, abs=1e-3) and not layout["tasks"]["more"]
    assert len(layout["tasks"]["lines"]) == 25 and layout["tasks"]["lines"][-1] == "peak unknown  HWM ?"


def test_a_malformed_rtos_tasks_is_left_out_and_said(tmp_path):
    snap = json.loads(FIXTURE.read_text())
    snap["tasks"] = rtos_tasks()
    snap["tasks"]["list"] = "yes"
    path = tmp_path / "bad_tasks.json"
    path.write_text(json.dumps(snap))
    proc, image, layout = render(path)
    assert proc.returncode == 0, proc.stderr
    why = "RTOS tasks not shown: $.tasks.list: expected an array, found string"
    assert layout["tasks"]["lines"] == [why]  # where the tasks would be
    assert why in layout["status"]["text"]
    assert region_colours_checked(snap, image, layout) >= 8  # the rest is shown
    # and the report says it too (a new user's trial: the tasks vanished from it without a word)
    html = tmp_path / "bad_tasks.html"
    proc = subprocess.run([str(VIEWER), str(path), "--report", str(html)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert why in html.read_text()


def test_snapshot_without_live_has_no_history_panel(shot):
    """Files and stops carry no "live": the layout is the one before the history panel (the plan
    reaches the bottom margin) and no history colour is drawn anywhere."""
    snap, image, layout = shot
    assert "live" not in snap and "history" not in layout
    plan = layout["plan"]
    assert abs(plan["y"] + plan["h"] - (800 - 8)) < 0.01
    assert abs(plan["h"] - ((800 - 38 - 8) * 0.58 - 8)) < 0.01  # body less the map's 42 %, less a margin
    colours = set(image.getdata())
    assert not colours & {PALETTE["history_used"], PALETTE["history_stack_peak"], PALETTE["history_gap"]}
    assert layout["status"]["text"].startswith("file: ") and not layout["status"]["lost"]


@pytest.mark.parametrize("name,mutate,message", [
    ("truncated", lambda t: t[: len(t) // 2], "not valid JSON"),
    ("wrong type", lambda t: t.replace('"head_bytes": 672', '"head_bytes": "lots"'),
     "head_bytes: expected a non-negative"),
    ("negative size", lambda t: t.replace('"size_bytes": 96', '"size_bytes": -96', 1),
     "expected a non-negative integer, found -96"),
    ("huge count",
     lambda t: t.replace('"checks": [', '"checks": [' + '{"rule":"x","verdict":"PASS","reason":""},' * 300, 1),
     "more than the 256"),
    ("not json", lambda t: "\x00\xff garbage", "not valid JSON"),
    # Bytes that are not UTF-8 in a post-mortem string: the JSON parser refuses the text, and the
    # message, which quotes what it read, is escaped (this test reads stderr as UTF-8).
    ("non-UTF-8 post-mortem", lambda t: t.encode().replace(b"{", b'{"tflm": {"meaning": "arena \xff\xfe"}, ', 1),
     "ill-formed UTF-8 byte; last read: '\"arena \\xFF'"),
])
def test_malformed_snapshots_show_an_error_and_exit_non_zero(name, mutate, message):
    text = mutate(FIXTURE.read_text())
    with tempfile.NamedTemporaryFile("wb", suffix=".json", delete=False) as f:
        f.write(text if isinstance(text, bytes) else text.encode())
    try:
        proc, image, _ = render(f.name)
    finally:
        os.unlink(f.name)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    red = sum(1 for p in image.getdata() if p == PALETTE["touched"])
    assert red > 50, "the error is not drawn in the window"


STANDIN_SMASHED = ROOT / "tests" / "fixtures" / "standin_stack_into_arena_snapshot.json"
STANDIN_UNDERSIZED = ROOT / "tests" / "fixtures" / "standin_undersized_snapshot.json"


def _deep(depth):
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("name,mutate,message", [
    ("wrong type", lambda t: t.replace('"tflm": {', '"tflm": "yes", "x": {', 1),
     "$.tflm: expected an object or null, found string"),
    ("wrong type inside", lambda t: t.replace('"condition": "unfinished"', '"condition": 7', 1),
     "$.tflm.condition: expected a string, found number"),
    ("unknown condition", lambda t: t.replace('"condition": "unfinished"', '"condition": "' + "z" * 100000 + '"', 1),
     '$.tflm.condition: "' + "z" * 40 + '..." is not one of'),
    ("huge array", lambda t: t.replace('"verdicts": [', '"verdicts": [' + '{"kind": "allocation-failed"},' * 100000, 1),
     "$.tflm.verdicts[65477]: more than 131072 JSON values"),  # refused as read (bounded_json.h)
    ("huge smashed", lambda t: t.replace('"smashed": []', '"smashed": [' + ",".join(
        ['{"name": "x", "addr": 1, "size": 1, "why": "y"}'] * 257) + "]", 1),
     "$.tflm.verdicts[0].smashed: 257 entries, more than the 256"),
    ("deep nesting", lambda t: t.replace('"evidence": [', '"evidence": [' + _deep(100000) + ",", 1),
     "$.tflm.evidence[0][0][0]"),  # ... nested deeper than 32 levels (byte N), refused as read
    ("too much text",
     lambda t: t.replace('"evidence": [', '"evidence": [' + ",".join(['"' + "w " * 3000 + '"'] * 56) + ",", 2),
     "$.tflm: more than 64 KiB of text"),
])
def test_a_malformed_post_mortem_is_left_out_and_said(name, mutate, message):
    """A hostile "tflm" never crashes or hangs the viewer: the snapshot is drawn without it (the
    map is there, no post-mortem panel) and the status line says why, naming the field."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(mutate(STANDIN_UNDERSIZED.read_text()))
    try:
        proc, image, layout = render(f.name, timeout=60)
    finally:
        os.unlink(f.name)
    assert proc.returncode == 0, proc.stderr
    assert "post-mortem not shown: " + message in layout["status"]["text"], layout["status"]["text"][:400]
    assert message in proc.stderr
    assert "fault" not in layout and "fault_lines" not in layout
    snap = json.loads(STANDIN_UNDERSIZED.read_text())
    y = bar_row(layout)
    a = snap["arenas"][0]
    assert image.getpixel((int(x_of(layout, a["base_addr"] + (a["tail_offset"] + a["size_bytes"]) / 2)), y)) in \
        family(PALETTE["metadata"])


def test_a_very_long_post_mortem_line_is_cut_and_the_panel_still_scrolls(tmp_path):
    snap = json.loads(STANDIN_UNDERSIZED.read_text())
    snap["tflm"]["verdicts"][0]["headline"] = "VERDICT: " + "long " * 200000
    path = tmp_path / "long.json"
    path.write_text(json.dumps(snap))
    proc, image, layout = render(path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    headline = layout["fault_lines"][1]
    assert headline.startswith("VERDICT: long long") and headline.endswith("...") and len(headline) <= 4096 + 3
    assert layout["fault_more"]


def _box(r, inset=0):
    return (int(r["x"]) + inset, int(r["y"]) + inset, int(r["x"] + r["w"]) - inset, int(r["y"] + r["h"]) - inset)


@pytest.mark.parametrize("fixture", [STANDIN_SMASHED, STANDIN_UNDERSIZED], ids=["stack-into-arena", "undersized"])
def test_post_mortem_verdicts_are_in_the_panel_first(fixture):
    """The panel below the summary: each tflm verdict's headline (red), its evidence and smashed
    objects, TFLM's condition with its meaning; with a fault, the fault's decode after them. The
    undersized snapshot has no fault: before the post-mortem panel it showed no verdict at all."""
    snap = json.loads(fixture.read_text())
    proc, image, layout = render(fixture)
    assert proc.returncode == 0, proc.stderr
    assert "fault" in layout, "no post-mortem panel"
    lines, tflm = layout["fault_lines"], snap["tflm"]
    assert tflm["verdicts"]
    for v in tflm["verdicts"]:
        assert v["headline"].startswith("VERDICT:") and v["headline"] in lines
        at = lines.index(v["headline"])
        expected = v["evidence"] + [f"overwritten: {o['name']} at {o['addr']:#x} ({o['size']} B): {o['why']}"
                                    for o in v["smashed"]]
        assert lines[at + 1: at + 1 + len(expected)] == expected
    assert f"TFLM: {tflm['condition']}: {tflm['meaning']}" in lines
    first_headline = lines.index(tflm["verdicts"][0]["headline"])
    fault_at = next((i for i, line in enumerate(lines) if line.startswith("FAULT: ")), None)
    if snap["fault"]:
        assert fault_at is not None and first_headline < fault_at, "the post-mortem's answer is not first"
        assert lines[fault_at].startswith("FAULT: " + snap["fault"]["exception"])
        assert "PC " + snap["fault"]["pc_where"] in lines[fault_at:]
        assert len(lines) == len(set(lines)), "a line is drawn twice"
    else:
        assert fault_at is None
    # The right column as with a fault: summary 40 % of the body, the panel, the two-column legend.
    summary, panel, legend = layout["summary"], layout["fault"], layout["legend"]
    assert abs(summary["h"] - 754 * 0.40) < 0.01 and abs(legend["y"] - (panel["y"] + panel["h"] + 8)) < 0.01
    # In pixels: the headline's FAIL red inside the panel (its border left out).
    reds = sum(1 for p in image.crop(_box(panel, 2)).getdata() if p == PALETTE["touched"])
    assert reds > 300, "no red headline in the panel"
    # The panel is longer than its room: its bottom line says so, and no text runs under the mark.
    assert layout["fault_more"]
    strip = (int(panel["x"]) + 1, int(panel["y"] + panel["h"]) - 17, int(panel["x"] + panel["w"]) - 1,
             int(panel["y"] + panel["h"]) - 1)
    colours = set(image.crop(strip).getdata())
    assert (170, 170, 170) in colours, "no 'more below: scroll' mark"
    assert not colours & {PALETTE["touched"], (230, 230, 230), (200, 200, 200)}, "text under the 'more below' mark"


def test_no_post_mortem_panel_without_verdicts():
    """"tflm" without verdicts (and no fault): no panel; the right column is the summary and the
    one-column legend, as for any snapshot without a fault."""
    snap = json.loads(STANDIN_UNDERSIZED.read_text())
    snap["tflm"]["verdicts"] = []
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(snap, f)
    try:
        proc, image, layout = render(f.name)
    finally:
        os.unlink(f.name)
    assert proc.returncode == 0, proc.stderr
    assert "fault" not in layout and "fault_lines" not in layout
    assert layout["legend"]["h"] == 16 * 15 + 8 and abs(layout["summary"]["h"] - (754 - 248 - 8)) < 0.01
    assert "post-mortem not shown" not in layout["status"]["text"]


def _smashed_regions(snap):
    """The arena's regions whose address range is a smashed object's (by address and size: the
    rebuilt layout's names end in "(predicted)")."""
    a = snap["arenas"][0]
    spans = {(o["addr"], o["size"]) for v in snap["tflm"]["verdicts"] for o in v["smashed"]}
    return [r for r in a["regions"] if (r["address"], r["size_bytes"]) in spans]


def test_smashed_objects_are_in_the_damage_colour_on_the_map():
    snap = json.loads(STANDIN_SMASHED.read_text())
    a = snap["arenas"][0]
    smashed = _smashed_regions(snap)
    assert len(smashed) == 6 and all(r["label"].endswith("(predicted)") for r in smashed)
    assert snap["fault"]["damaged_regions"] == []  # the red comes from the post-mortem alone
    proc, image, layout = render(STANDIN_SMASHED)
    assert proc.returncode == 0, proc.stderr
    bar_y = bar_row(layout)
    top, lane_h = layout["lanes"]["top"], layout["lanes"]["lane_h"]
    lane0_y = int(top + (lane_h - 1) / 2)  # tail regions are in lane 0
    for r in smashed:
        x0, x1 = x_of(layout, r["address"]), x_of(layout, r["address"] + r["size_bytes"])
        xs = [int((x0 + x1) / 2)] if x1 - x0 >= 3 else [int((x0 + x1) / 2) + d for d in (-1, 0, 1)]
        for y in (bar_y, lane0_y):
            assert PALETTE["touched"] in [image.getpixel((x, y)) for x in xs], (r["label"], y)
    # Its neighbour below, not smashed, keeps its kind's colour: not the whole tail is red.
    intact = next(r for r in a["regions"] if r["label"].startswith("subgraph 0: NodeAndRegistration"))
    assert (intact["address"] + intact["size_bytes"]) == min(r["address"] for r in smashed)
    x = int(x_of(layout, intact["address"] + intact["size_bytes"] / 2))
    assert image.getpixel((x, bar_y)) == PALETTE[intact["kind"]]
    assert image.getpixel((x, lane0_y)) == PALETTE[intact["kind"]]


def test_no_damage_colour_on_the_map_when_nothing_was_smashed():
    snap = json.loads(STANDIN_UNDERSIZED.read_text())
    assert not _smashed_regions(snap)
    proc, image, layout = render(STANDIN_UNDERSIZED)
    assert proc.returncode == 0, proc.stderr
    assert PALETTE["touched"] not in set(image.crop(_box(layout["map"], 1)).getdata())


def test_the_arena_chosen_on_the_command_line_is_drawn_with_its_own_regions(tmp_path):
    """--arena N once drew arena N with arena 0's lanes and draw order (indices into arena 0's
    regions): with fewer regions in arena N, the viewer read past them and crashed."""
    snap = json.loads(STANDIN_UNDERSIZED.read_text())  # no free band, an empty head: one region is a valid arena
    other = json.loads(json.dumps(snap["arenas"][0]))
    other["index"], other["base_addr"] = 1, snap["arenas"][0]["base_addr"] + 0x10000
    meta = next(r for r in other["regions"] if r["kind"] == "metadata" and r["size_bytes"] > 400)
    other["regions"] = [dict(meta, index=0, address=other["base_addr"] + meta["offset"])]
    snap["arenas"].append(other)
    path = tmp_path / "two_arenas.json"
    path.write_text(json.dumps(snap))
    proc, image, layout = render(path, args=("--arena", "1"))
    assert proc.returncode == 0, proc.stderr
    assert layout["axis"]["view_lo"] == other["base_addr"]
    y = int(layout["lanes"]["top"] + (layout["lanes"]["lane_h"] - 1) / 2)
    x = int(x_of(layout, other["base_addr"] + meta["offset"] + meta["size_bytes"] / 2))
    assert image.getpixel((x, y)) == PALETTE["metadata"]


def test_bad_arguments_are_refused():
    for args, message in ((["--connect", "10.1.2.3:47800"], "loopback only"),
                          (["--size", "9x9", str(FIXTURE)], "--size"),
                          ([], "give a snapshot file"), (["--frames", "0", str(FIXTURE)], "expected 1..100000"),
                          ([str(FIXTURE), "--screenshot", ""], "--screenshot needs a PNG path")):
        proc = subprocess.run([str(VIEWER), *args], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2 and message in proc.stderr, (args, proc.stderr)


@pytest.mark.skipif(not FIRMWARE.exists(), reason="firmware not built")
def test_live_link_from_gdb_and_qemu():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    plugin = ROOT / "gdbplugin" / "arenascope.py"
    for stale in ("/tmp/arenascope-live-test.png", "/tmp/arenascope-live-test.json"):
        if os.path.exists(stale):
            os.remove(stale)  # the wait below is for this run's screenshot
    with qemu() as (qport, _):
        viewer = subprocess.Popen([str(VIEWER), "--connect",
                                   f"127.0.0.1:{port}", "--wait-snapshot", "60", "--frames", "5", "--screenshot",
                                   "/tmp/arenascope-live-test.png", "--layout-out", "/tmp/arenascope-live-test.json"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=DISPLAY_ENV)
        _, text = gdb_batch(FIRMWARE, [f"source {plugin}", "break demo_invoke_done if invokes == 1", "continue",
                                       "delete", "set var demo_scenario = 2", "break demo_invoke_done if invokes == 2",
                                       "continue",
                                       f"arena view --no-launch --port {port} --wait 30",
                                       # GDB (the server) stays until the viewer has drawn and written its
                                       # screenshot, at most 60 s
                                       "python exec(\"import os, time\\nend = time.monotonic() + 60\\n"
                                       "while not os.path.exists('/tmp/arenascope-live-test.png') and "
                                       "time.monotonic() < end: time.sleep(0.05)\")"], remote_port=qport)
        out, err = viewer.communicate(timeout=90)
    assert "arena view: snapshot sent to 1 viewer(s), verdict FAIL" in text, text
    assert viewer.returncode == 0, err
    assert "1 live snapshot(s) received" in out or "2 live snapshot(s) received" in out, out
    from PIL import Image
    image = Image.open("/tmp/arenascope-live-test.png").convert("RGB")
    layout = json.load(open("/tmp/arenascope-live-test.json", encoding="utf-8"))
    y = bar_row(layout)
    base = layout["axis"]["view_lo"]
    # Scenario 2 writes 128 B past the head: 64 B of temp, then 64 B of the free band (the
    # demo's layout: the planner's prediction for its model, examples/demo/demo_plan.h).
    plan = demo_plan()
    head = plan["plans"]["tflm-greedy"]["head_bytes"]
    tail_offset = plan["arena"]["recommended_bytes"] - plan["tail"]["bytes"]
    x = int(x_of(layout, base + head + 96))
    assert PALETTE["touched"] in [image.getpixel((x + d, y)) for d in (-1, 0, 1)]  # the overrun, streamed live
    assert image.getpixel((int(x_of(layout, base + (head + 128 + tail_offset) // 2)), y)) == PALETTE["free"]


def test_viewer_keeps_the_last_snapshot_and_reconnects_when_gdb_comes_back():
    """The plugin's own server module (no GDB needed to serve bytes): a first session sends the
    overrun snapshot and goes away; a second one on the same port sends a clean snapshot. The
    viewer must reconnect by itself and show the second one."""
    import socket
    import sys
    sys.path.insert(0, str(ROOT / "gdbplugin"))
    from arenascope_plugin.serve import viewerlink
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    first = json.loads(FIXTURE.read_text())
    second = json.loads(FIXTURE.read_text())
    second["arenas"][0]["damage"] = None  # the free band intact again
    with tempfile.TemporaryDirectory() as tmp:
        png, lay = os.path.join(tmp, "s.png"), os.path.join(tmp, "l.json")
        viewer = subprocess.Popen([str(VIEWER), "--connect", f"127.0.0.1:{port}", "--wait-snapshot", "60",
                                   "--snapshots", "2", "--screenshot", png, "--layout-out", lay],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=DISPLAY_ENV)
        server = viewerlink.SnapshotServer(port)
        assert server.connected.wait(30), "the viewer never connected"
        server.broadcast(viewerlink.message(first))
        server.close()                      # GDB goes away: the viewer keeps its snapshot (sent before the close)
        server = viewerlink.SnapshotServer(port)  # GDB comes back on the same port
        assert server.connected.wait(30), "the viewer did not reconnect"
        server.broadcast(viewerlink.message(second))
        out, err = viewer.communicate(timeout=90)
        server.close()
        assert viewer.returncode == 0, err
        assert "2 live snapshot(s) received" in out, out
        from PIL import Image
        image = Image.open(png).convert("RGB")
        layout = json.load(open(lay, encoding="utf-8"))
    y = bar_row(layout)
    base = layout["axis"]["view_lo"]
    assert image.getpixel((int(x_of(layout, base + 768)), y)) == PALETTE["free"]  # the second snapshot's


def test_fault_panel_and_damaged_regions_in_red():
    fixture = ROOT / "tests" / "fixtures" / "demo_stack_fault_snapshot.json"
    snap = json.loads(fixture.read_text())
    proc, image, layout = render(fixture)
    assert proc.returncode == 0, proc.stderr
    a = snap["arenas"][0]
    y = bar_row(layout)
    for i in snap["fault"]["damaged_regions"]:
        r = a["regions"][i]
        x = int(x_of(layout, a["base_addr"] + r["offset"] + r["size_bytes"] / 2))
        assert image.getpixel((x, y)) == PALETTE["touched"], r
    intact = next(r for r in a["regions"] if r["kind"] == "persistent" and r["size_bytes"] >= 512)
    x = int(x_of(layout, a["base_addr"] + intact["offset"] + intact["size_bytes"] / 2))
    assert image.getpixel((x, y)) == PALETTE["persistent"]
    # The right column (1280x800: body 754 px from y 38): summary 40 % of it, the fault panel, and
    # the legend's 8 rows of 15 px + 8 at the bottom; nothing overlaps.
    summary, fault, legend = layout["summary"], layout["fault"], layout["legend"]
    assert summary["y"] == 38 and abs(summary["h"] - 754 * 0.40) < 0.01
    assert abs(fault["y"] - (38 + 754 * 0.40 + 8)) < 0.01 and abs(legend["h"] - 128) < 0.01
    assert abs(legend["y"] + legend["h"] - 792) < 0.01 and abs(legend["y"] - (fault["y"] + fault["h"] + 8)) < 0.01

    def box(r):
        return (int(r["x"]), int(r["y"]), int(r["x"] + r["w"]), int(r["y"] + r["h"]))
    reds = sum(1 for p in image.crop(box(fault)).getdata() if p == PALETTE["touched"])
    assert reds > 300, "the fault panel's red text is missing"
    # The legend is still there with a fault: every swatch of the map's kinds in it.
    swatches = set(image.crop(box(legend)).getdata())
    for kind in ("tensor", "scratch", "temp", "persistent", "metadata", "free", "touched", "stack_used",
                 "stack_unused", "guard"):
        assert PALETTE[kind] in swatches, kind
    # The verdict panel is taller than its room: its bottom line (16 px, below the text) says there
    # is more, in the mark's grey, and no other text is drawn there.
    strip = (int(fault["x"]) + 1, int(fault["y"] + fault["h"]) - 17, int(fault["x"] + fault["w"]) - 1,
             int(fault["y"] + fault["h"]) - 1)
    colours = set(image.crop(strip).getdata())
    assert (170, 170, 170) in colours, "no 'more below: scroll' mark on a fault panel that does not fit"
    assert PALETTE["touched"] not in colours, "the fault panel's text runs under its 'more below' mark"
    # Failing checks come first in the summary (the fixture lists 5 PASS, then guard and stack FAIL).
    checks = [line.split()[:2] for line in layout["summary_lines"] if line[:4] in ("PASS", "FAIL", "WARN")]
    assert checks == [["FAIL", "guard"], ["FAIL", "stack"], ["PASS", "canary"], ["PASS", "alignment"],
                      ["PASS", "plan"], ["PASS", "used"], ["PASS", "headroom"]]


def test_a_screenshot_does_not_depend_on_the_pointer(tmp_path):
    """Xvfb puts its pointer in the middle of the screen: on this module's 1280x800 screen that is
    (640, 400), over a 1024x700 window's RAM column, where hovering draws a tooltip; on a
    4000x4000 screen it is off the window. Both pictures must be the same, pixel for pixel."""
    from PIL import Image, ImageChops
    fixture = ROOT / "tests" / "fixtures" / "demo_stack_fault_snapshot.json"

    def shot(env, name):
        png = tmp_path / name
        r = subprocess.run([str(VIEWER), str(fixture), "--screenshot", str(png), "--size", "1024x700"],
                           capture_output=True, text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        return Image.open(png).convert("RGB")
    under_pointer = shot(DISPLAY_ENV, "near.png")
    with xvfb(4000, 4000) as env:
        far = shot(env, "far.png")
    assert ImageChops.difference(under_pointer, far).getbbox() is None


def test_a_two_column_legend_splits_evenly():
    """At 1024x700 with no fault 38 % of the right column (245.5 px) cannot hold 16 rows (248): the
    legend is two columns of 8 in 128 px, the first ending with 'free, touched', the second
    starting with the guard band (a 16 + 1 split once left one entry alone)."""
    proc, image, layout = render(FIXTURE, args=("--size", "1024x700"))
    assert proc.returncode == 0, proc.stderr
    r = layout["legend"]
    assert r["h"] == 128 and r["y"] + r["h"] == 692
    left = set(image.crop((int(r["x"]), int(r["y"]), int(r["x"] + r["w"] / 2), int(r["y"] + r["h"]))).getdata())
    right = set(image.crop((int(r["x"] + r["w"] / 2), int(r["y"]), int(r["x"] + r["w"]),
                            int(r["y"] + r["h"]))).getdata())
    for kind in ("tensor", "scratch", "temp", "persistent", "metadata", "free", "free_unmeasured", "touched"):
        assert PALETTE[kind] in left and PALETTE[kind] not in right, kind
    for kind in ("guard", "stack_used", "stack_unused"):
        assert PALETTE[kind] in right and PALETTE[kind] not in left, kind


PLAN = BUILD / "planner" / "arenascope-plan"
DSCNN = BUILD / "planner" / "dscnn_kws.tflite"


@pytest.mark.skipif(not DSCNN.exists(), reason="planner not built")
def test_model_plan_snapshot_shows_with_no_target(tmp_path):
    """arenascope-plan --snapshot: a model's predicted arena in the snapshot schema; the viewer
    draws it with no target. Expected figures: the DS-CNN's head is two 25x5x64 int8 activations
    (16000 B, worked in test_planner_models.py); the arena is the recommended size, a multiple
    of 16 at least 10 % above the minimum; every region sits where the snapshot says, in its
    kind's colour; the status line says it is a model."""
    import jsonschema
    snap_file = tmp_path / "dscnn.json"
    r = subprocess.run([str(PLAN), "--snapshot", str(snap_file), str(DSCNN)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    snap = json.loads(snap_file.read_text())
    jsonschema.validate(snap, json.loads((ROOT / "docs" / "snapshot-schema.json").read_text()))
    assert snap["source"]["located_by"] == "model" and snap["source"]["model"] == str(DSCNN)
    a = snap["arenas"][0]
    assert a["head_bytes"] == 16000 and a["plan"]["lower_bound_bytes"] == 16000
    assert a["size_bytes"] % 16 == 0 and a["size_bytes"] * 100 >= a["minimum_arena_bytes"] * 110
    assert a["tail_offset"] + a["tail_bytes"] == a["size_bytes"] and a["used_bytes"] == 16000 + a["tail_bytes"]
    tail = [x for x in a["regions"] if x["kind"] in ("persistent", "metadata")]
    assert tail and all(a["tail_offset"] <= x["offset"] and x["offset"] + x["size_bytes"] <= a["size_bytes"]
                        for x in tail)
    assert snap["verdict"] == "PASS" and snap["stack"]["source"] == "none"
    assert a["peak_bytes"] == max(a["minimum_arena_bytes"], a["used_bytes"])
    proc, image, layout = render(snap_file)
    assert proc.returncode == 0, proc.stderr
    assert region_colours_checked(snap, image, layout) >= 10
    # The free space between head and tail: no canary in a prediction, so not "canary intact".
    y = bar_row(layout)
    assert image.getpixel((int(x_of(layout, (a["head_bytes"] + a["tail_offset"]) // 2)), y)) == \
        PALETTE["free_unmeasured"]
    # A prediction's spare bytes are the margin over the minimum, not a target's headroom: the free
    # space on the map is AllocateTensors' working space.
    margin = a["size_bytes"] - a["minimum_arena_bytes"]
    assert f"margin     {margin} B = {100 * margin / a['minimum_arena_bytes']:.1f} % over the minimum" in \
        layout["summary_lines"], layout["summary_lines"]
    assert not any(line.startswith("headroom") for line in layout["summary_lines"])


def test_a_few_damaged_bytes_stay_visible_at_zoom_one(display, tmp_path):
    """An 8-byte canary hit is a fraction of a pixel at zoom 1: the map draws it at least 4 px
    wide around its centre, so the one thing it must show is never lost."""
    snap = json.loads(pathlib.Path(FIXTURE).read_text())
    a = snap["arenas"][0]
    a["damage"] = {"offset": a["damage"]["offset"], "size_bytes": 8}
    path = tmp_path / "tiny_damage.json"
    path.write_text(json.dumps(snap))
    proc, image, layout = render(path)
    assert image is not None, proc.stderr
    y = bar_row(layout)
    damage = a["base_addr"] + a["damage"]["offset"]
    centre = x_of(layout, damage + 4)
    assert x_of(layout, damage + 8) - x_of(layout, damage) < 1
    red = [x for x in range(int(centre) - 4, int(centre) + 5) if image.getpixel((x, y)) == PALETTE["touched"]]
    assert len(red) >= 3, red  # 4 px drawn; a boundary line may cross one (2 px at most before)
