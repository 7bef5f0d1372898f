"""Progress per arm while an evaluation runs: counts, and the time left from each arm's own pace."""

from __future__ import annotations

import statistics

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
    # 60 s of runs in 30 s of wall time: two at once. Left: slow 2 × 40 s, fast 3 × 20 s of runs
    assert p.seconds_left(slow) == pytest.approx(40.0) and p.seconds_left(fast) == pytest.approx(30.0)
    assert p.seconds_left() == pytest.approx(70.0)
    p.end()
    now[0] += 100.0
    assert p.elapsed == pytest.approx(30.0)  # the clock stops when the evaluation ends


def test_before_the_first_question_ends_the_estimate_is_each_methods_recorded_pace():
    from core.engine.question import Question
    from core.engine.runner import execute
    from core.engine.store import RunStore
    from core.studio.eval.progress import recorded_seconds
    from tests.fakes import ScriptedLLM

    store = RunStore()
    assert recorded_seconds(store, "cot", "scripted") is None  # nothing recorded: no estimate yet
    llm = ScriptedLLM(delay=0.3).enqueue(*[{"reasoning": "r", "answer": "A"}] * 3)  # runs that take some time
    runs = [
        execute(
            "cot",
            Question(text="Which hormone lowers glucose?", options={"A": "insulin", "B": "glucagon"}),
            llm=llm,
            store=store,
        )
        for _ in range(3)
    ]
    pace = recorded_seconds(store, "cot", "scripted")
    assert pace == statistics.median(run.totals.seconds for run in runs) and pace > 0
    assert recorded_seconds(store, "cot", "another model") is None
    p = EvalProgress()
    p.plan("cot", "CoT", total=10, before=2, recorded=pace)
    p.plan("medrag", "MedRAG", total=10, before=0, recorded=None)
    assert p.from_record and p.seconds_left(p.arms()[0]) == pytest.approx(8 * pace)
    from core.engine.llm.embedded import MODEL_NAME

    assert recorded_seconds(store, "sema", MODEL_NAME) > 30  # none stored: the embedded model's measured pace
    assert p.seconds_left() is None  # an arm with no record: no estimate for the whole
    p.record("cot", item_result(status="ok", correct=1, seconds=5.0))
    assert not p.from_record  # from now on, this evaluation's own pace
