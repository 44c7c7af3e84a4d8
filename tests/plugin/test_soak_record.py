"""analyse/soak.py: the worst of each rule over a run, with the inference it first happened at."""
from arenascope_plugin.analyse.figures import FAIL, PASS, WARN, Check
from arenascope_plugin.analyse.soak import Soak
from arenascope_plugin.present import soak as soak_text
from arenascope_plugin.present import style


def test_the_worst_verdict_of_each_rule_keeps_where_it_first_happened(monkeypatch):
    monkeypatch.setattr(style, "enabled", False)
    s = Soak(4)
    s.observe(7, [Check("canary", PASS, "intact"), Check("stack", PASS, "room")], {0: 100}, 40)
    s.observe(8, [Check("canary", WARN, "odd"), Check("stack", PASS, "room")], {0: 120}, 36)
    s.observe(9, [Check("canary", FAIL, "broken at 0x20000100"), Check("stack", PASS, "room")], {0: 120}, 48)
    s.observe(10, [Check("canary", FAIL, "broken again"), Check("stack", PASS, "room")], {0: 110}, 48)
    assert (s.inferences, s.last, s.verdict) == (4, 10, FAIL)
    c = s.rules["canary"]
    assert (c.verdict, c.reason, c.first, c.times) == (FAIL, "broken at 0x20000100", 9, 2)
    assert (s.rules["stack"].times, s.rules["stack"].first) == (4, 7)
    assert (s.arena_peaks[0].bytes, s.arena_peaks[0].at) == (120, 8)   # the first inference that reached it
    assert (s.stack_peak.bytes, s.stack_peak.at) == (48, 9)
    text = "\n".join(soak_text.lines(s, "how", 1.25))
    assert "soak: 4 inferences in 1.2 s (how): FAIL" in text
    assert "  FAIL  canary     first at inference 9, 2 in all: broken at 0x20000100" in text
    assert "  PASS  stack      all 4: room" in text
    doc = soak_text.json_doc(s, "how", 1.25)
    assert doc["rules"]["canary"] == {"verdict": FAIL, "reason": "broken at 0x20000100", "first": 9, "times": 2}


def test_a_target_that_broke_fails_the_run_whatever_the_rules_said(monkeypatch):
    monkeypatch.setattr(style, "enabled", False)
    s = Soak(10)
    s.observe(1, [Check("stack", PASS, "room")], {}, None)
    s.stop("no inference ended within 2 s", True)
    assert s.verdict == FAIL and s.rules["stack"].verdict == PASS
    s = Soak(10)
    s.stop("Ctrl-C after 0 inferences", False)
    assert s.verdict == WARN and s.inferences == 0  # nothing checked: nothing to vouch for
    assert "stopped early: Ctrl-C after 0 inferences" in "\n".join(soak_text.lines(s, "how", 0.0))
