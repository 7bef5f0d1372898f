"""Progress per arm while an evaluation runs: counts, and the time left from each arm's own pace."""

from __future__ import annotations

import pytest

from core.studio.eval import progress as progress_module
from core.studio.eval.progress import EvalProgress
from tests.fakes import item_result


def test_time_left_follows_each_arms_pace_at_the_measured_parallelism(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(progress_module.time, "time", lambda: now[0])
    p = EvalProgress()
    p.plan("slow", "Slow", total=4, before=1)
    p.plan("fast", "Fast", total=4, before=0)
    assert p.seconds_left() is None  # nothing finished yet: no pace to go by
    now[0] += 30.0
    p.record("slow", item_result(status="ok", correct=1, seconds=40.0))
    p.record("fast", item_result(status="error", correct=0, seconds=20.0))
    slow, fast = p.arms()
    assert (slow.finished, slow.left, slow.correct, fast.errors) == (2, 2, 1, 1)
    # 60 s of runs in the 40 s since the first of them began: 1.5 at once. Left: slow 2 × 40 s, fast 3 × 20 s of runs
    assert p.seconds_left(slow) == pytest.approx(80 / 1.5) and p.seconds_left(fast) == pytest.approx(60 / 1.5)
    assert p.seconds_left() == pytest.approx(140 / 1.5)
    p.end()
    now[0] += 100.0
    assert p.elapsed == pytest.approx(30.0)  # the clock stops when the evaluation ends


def test_before_the_first_question_ends_the_estimate_counts_down_each_methods_expected_pace(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(progress_module.time, "time", lambda: now[0])
    p = EvalProgress()
    p.plan("cot", "CoT", total=10, before=2, recorded=10.0)
    p.plan("medrag", "MedRAG", total=10, before=0, recorded=None)
    assert p.from_record and p.seconds_left(p.arms()[0]) == pytest.approx(80.0)
    assert p.seconds_left() is None  # an arm with no estimate: no estimate for the whole
    now[0] += 30.0
    assert p.seconds_left(p.arms()[0]) == pytest.approx(50.0)  # it counts down while the first question runs
    now[0] += 100.0
    assert p.seconds_left(p.arms()[0]) == 0.0


def test_one_slow_first_question_moves_the_estimate_a_third_of_the_way(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(progress_module.time, "time", lambda: now[0])
    p = EvalProgress()
    p.plan("cot", "CoT", total=10, before=0, recorded=10.0)
    now[0] += 40.0  # a cold first question: 40 s where 10 s were expected
    p.record("cot", item_result(status="ok", correct=1, seconds=40.0))
    assert not p.from_record  # from now on, this evaluation's own pace, beside the expected one
    assert p.seconds_left() == pytest.approx(9 * (2 * 10.0 + 40.0) / 3)  # 180 s, not 9 × 40 s
    for _ in range(8):
        now[0] += 10.0
        p.record("cot", item_result(status="ok", correct=1, seconds=10.0))
    assert p.seconds_left() == pytest.approx((2 * 10.0 + 120.0) / 11)  # the last question, at the pace seen
