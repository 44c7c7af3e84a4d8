"""The long-read progress line (present/progress.py) on a clock the test moves."""
from arenascope_plugin.present.progress import Progress


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_nothing_is_shown_for_a_read_under_a_second():
    out, clock = [], Clock()
    p = Progress(out.append, "arena check", clock=clock)
    clock.t += 0.9
    p.add(4096)
    p.done()
    assert out == []


def test_one_line_updates_in_place_then_ends_with_what_was_read():
    out, clock = [], Clock()
    p = Progress(out.append, "arena stack", clock=clock)
    for _ in range(8):                 # 8 chunks of 4 KiB, 0.5 s apart: 8 KiB/s
        clock.t += 0.5
        p.add(4096, None, None)
    assert out[0] == "\rarena stack: reading target memory, 8.0 KiB so far, 8.0 KiB/s (Ctrl-C stops it)"
    assert len(out) == 7 and all(o.startswith("\r") and "\n" not in o for o in out)
    assert out[-1].startswith("\rarena stack: reading target memory, 32.0 KiB so far, 8.0 KiB/s")
    p.done()
    assert out[-1].startswith("\rarena stack: read 32.0 KiB in 4.0 s") and out[-1].endswith("\n")


def test_a_long_read_of_known_length_has_a_bar_and_redraws_at_most_ten_times_a_second():
    out, clock = [], Clock()
    p = Progress(out.append, "arenascope check", clock=clock)
    clock.t += 1.5
    p.add(30 * 1024, 30 * 1024, 120 * 1024)
    clock.t += 0.05
    p.add(1024, 31 * 1024, 120 * 1024)  # within 0.1 s of the last redraw: not drawn
    assert len(out) == 1
    assert "[#####...............] 25% of 120.0 KiB" in out[0]
