"""livepoll.run, the live view's loop, on a clock of the test's own: what it says (a fault once,
and again when its verdict changes; a lost link in the link's words) and when it refreshes (no
burst after an error's pause)."""
from arenascope_plugin.serve import livepoll


class Clock:
    """time.monotonic for livepoll, and the stop event whose wait() is the only way it passes."""

    def __init__(self):
        self.now, self.stopped = 1000.0, False

    def monotonic(self):
        return self.now

    def is_set(self):
        return self.stopped

    def set(self):
        self.stopped = True

    def wait(self, seconds):
        self.now += seconds
        return self.stopped


class Reader:
    round_trip = 0.01


class Poller:
    """Plays `script`: each item a snapshot to publish or an exception to raise, a refresh taking
    `took` seconds of the clock; stops the loop after the last."""
    last, trouble, trouble_link, refreshes, ahead = None, None, "lost", 0, False

    def __init__(self, clock, script, took=0.005):
        self.clock, self.script, self.took, self.reader = clock, list(script), took, Reader()

    def refresh(self):
        self.clock.now += self.took
        item = self.script.pop(0)
        if not self.script:
            self.clock.set()
        if isinstance(item, Exception):
            raise item
        self.refreshes += 1
        self.last = item
        return item

    def lost(self, why, how):
        return None

    def settle(self):
        pass


def running(clock, monkeypatch, script, hz=20.0, took=0.005):
    monkeypatch.setattr(livepoll.time, "monotonic", clock.monotonic)
    said, published = [], []
    livepoll.run(Poller(clock, script, took), lambda snap: published.append(clock.now), hz, clock, said.append,
                 interval_errors=1.0)
    return said, published


def fault(headline, pc=0x1234):
    return {"fault": {"exception": "HardFault", "frame": {"pc": pc}, "pc_where": "overflow() at main.c:12",
                      "registers": [{"name": "CFSR", "value": 0x100}], "source": "core",
                      "verdicts": [{"headline": headline}]}}


def test_a_fault_is_said_once_and_again_when_its_verdict_changes(monkeypatch):
    wild, stack = "a wild write smashed the tail", "the stack ran into the arena"
    said, _ = running(Clock(), monkeypatch, [{}, fault(wild), fault(wild), fault(stack), fault(stack),
                                             fault(stack, pc=0x2000)])
    assert said == [
        f"fault seen while polling: HardFault at overflow() at main.c:12; {wild} (halt and run `arena fault` for "
        "the evidence)",
        f"the fault verdict changed while polling: HardFault at overflow() at main.c:12; {stack} (halt and run "
        "`arena fault` for the evidence)",
        f"fault seen while polling: HardFault at overflow() at main.c:12; {stack} (halt and run `arena fault` for "
        "the evidence)"]  # another PC: another fault


def test_a_lost_link_is_said_in_the_link_s_words(monkeypatch):
    lost = livepoll.LinkError("the link failed during this refresh: cannot connect to OpenOCD's Tcl port "
                              "127.0.0.1:6666: Connection refused")
    said, _ = running(Clock(), monkeypatch, [{}, lost, lost, {}])
    assert said == ["live read failed: the link failed during this refresh: cannot connect to OpenOCD's Tcl port "
                    "127.0.0.1:6666: Connection refused; retrying every 1 s", "live reads work again (refresh 2)"]


def test_no_burst_makes_up_an_error_s_pause(monkeypatch):
    # 20 a second; the link is lost for one refresh, the loop waits 1 s and tries again: the
    # refreshes after keep their period (50 ms), none back to back to make the pause up.
    lost = livepoll.LinkError("the link failed during this refresh: gone")
    _, published = running(Clock(), monkeypatch, [{}] * 5 + [lost] + [{}] * 10)
    gaps = [round(b - a, 6) for a, b in zip(published, published[1:], strict=False)]
    assert gaps[4] > 1.0                        # the pause
    # (the schedule starts as a refresh ends: one period and a refresh's 5 ms after it)
    assert gaps[:4] == gaps[5:9] == [0.055, 0.05, 0.05, 0.05], gaps  # before: 5 ms apart, CATCH_UP_S made up
