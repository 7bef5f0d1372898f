"""How long a method will take here: its measured seconds, scaled by how fast the model writes now."""

from __future__ import annotations

import pytest

from core.engine import estimate as estimate_module
from core.engine.estimate import estimate, recorded_seconds
from core.engine.llm.cache import ResponseCache
from core.engine.llm.embedded import MODEL_NAME
from core.engine.llm.speed import WritingMeter, measured
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from tests.fakes import ScriptedLLM

QUESTION = Question(text="Which hormone lowers glucose?", options={"A": "insulin", "B": "glucagon"})


def test_the_meter_says_tokens_per_second_now_and_per_call_recently():
    now = [0.0]
    meter = WritingMeter(clock=lambda: now[0])
    assert meter.now("m") is None and meter.recent("m") is None
    for _ in range(20):  # 20 tokens over 4 s, from two calls at once
        now[0] += 0.2
        meter.tick("m")
    assert meter.now("m") == pytest.approx(20 / 3.8)
    meter.call("m", 10, 4.0)
    meter.call("m", 10, 1.0)
    assert meter.recent("m") == pytest.approx(20 / 5.0) and meter.recent("other") is None
    now[0] += 60.0
    assert meter.now("m") is None  # nothing written lately: it waits, or reads a prompt


def test_the_embedded_models_estimate_is_its_measured_time_at_the_speed_it_writes_now(monkeypatch):
    meter = WritingMeter()
    monkeypatch.setattr(estimate_module, "WRITING", meter)
    speed = measured().methods["medrag"]
    idle = estimate(RunStore(), "medrag", MODEL_NAME, "embedded")
    assert idle.seconds == speed.median_seconds and idle.rate_now is None and not idle.long
    meter.call("embedded", int(speed.shipped.generated_per_s * 10), 40.0)  # a quarter of the speed it was measured at
    slow = estimate(RunStore(), "medrag", MODEL_NAME, "embedded")
    assert slow.seconds == pytest.approx(4 * speed.median_seconds, rel=0.02) and slow.long
    assert slow.left(30.0) == pytest.approx(slow.seconds - 30.0) and slow.left(10_000) == 0.0


def test_elsewhere_it_is_the_median_of_the_runs_that_reached_the_model(tmp_path):
    store = RunStore()
    assert estimate(store, "cot", "scripted", "scripted") is None  # nothing measured: no estimate
    llm = ScriptedLLM(delay=0.2, cache=ResponseCache(tmp_path / "cache.sqlite")).on(
        "glucose", {"reasoning": "r", "answer": "A"}
    )
    made = execute("cot", QUESTION, llm=llm, store=store)
    for _ in range(3):  # repeats from the cache: instant, and not what a run takes
        assert execute("cot", QUESTION, llm=llm, store=store).totals.cached
    assert recorded_seconds(store, "cot", "scripted") == made.totals.seconds
    found = estimate(store, "cot", "scripted", "scripted")
    assert found.seconds == made.totals.seconds and found.source == "the median of its runs here"


def test_every_call_that_reaches_a_model_reports_how_fast_it_wrote(monkeypatch):
    meter = WritingMeter()
    monkeypatch.setattr("core.engine.llm.client.WRITING", meter)
    llm = ScriptedLLM(delay=0.2).on("glucose", {"reasoning": "r", "answer": "A"})
    execute("cot", QUESTION, llm=llm)
    assert meter.recent(llm.backend) > 0 and meter.now(llm.backend) > 0
