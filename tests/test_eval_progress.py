"""Progress per arm while an evaluation runs: counts, and the time left from each arm's own pace."""

from __future__ import annotations

import pytest

from core.eval import progress as progress_module
from core.eval.progress import EvalProgress


def test_time_left_follows_each_arms_pace_at_the_measured_parallelism(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(progress_module.time, "time", lambda: now[0])
    p = EvalProgress()
    p.plan("slow", "Slow", total=4, before=1)
    p.plan("fast", "Fast", total=4, before=0)
    assert p.seconds_left() is None  # nothing finished yet: no pace to go by
    now[0] += 30.0
    p.record("slow", {"status": "ok", "correct": 1, "seconds": 40.0})
    p.record("fast", {"status": "error", "correct": 0, "seconds": 20.0})
    slow, fast = p.arms()
    assert (slow.finished, slow.left, slow.correct, fast.errors) == (2, 2, 1, 1)
    # 60 s of runs in 30 s of wall time: two at once. Left: slow 2 × 40 s, fast 3 × 20 s of runs
    assert p.seconds_left(slow) == pytest.approx(40.0) and p.seconds_left(fast) == pytest.approx(30.0)
    assert p.seconds_left() == pytest.approx(70.0)
    p.end()
    now[0] += 100.0
    assert p.elapsed == pytest.approx(30.0)  # the clock stops when the evaluation ends
