"""The LLM benchmark reaches the embedded server by URL; its client still runs methods as the studio runs them on
the embedded model (its answer format and reading budget), so the shipped configuration is what it measures."""

from __future__ import annotations

from benchmarks.llm_bench import SeededLLM
from core.engine.llm import LLM, Endpoint
from core.engine.llm.answer_formats import EMBEDDED_ANSWER_FORMAT
from core.engine.question import Question
from core.engine.runner import new_run


def test_the_benchmark_client_answers_in_the_embedded_models_format():
    endpoint = Endpoint(base_url="http://127.0.0.1:9/v1", model="qwen")
    bench = SeededLLM(endpoint, 2000, cache_mode="off")
    assert LLM(endpoint, cache_mode="off").answer_format != EMBEDDED_ANSWER_FORMAT  # a plain URL is an endpoint
    assert bench.answer_format == EMBEDDED_ANSWER_FORMAT and bench.reading_tokens == 2000
    run = new_run(
        "medrag",
        Question(text="Which hormone lowers blood glucose?", options={"A": "Insulin", "B": "Glucagon"}),
        {},
        llm=bench,
        retriever=None,
    )
    assert run.params["answer_format"] == EMBEDDED_ANSWER_FORMAT


def _run(seconds: float, sent: int, evaluated: int, completion: int, rate: float, question: str = "q1") -> dict:
    return {
        "question": question,
        "seconds": seconds,
        "prompt_sent": sent,
        "prompt_evaluated": evaluated,
        "completion": completion,
        "generated_per_s": rate,
        "status": "ok",
    }


def test_the_ratio_at_equal_work_separates_the_server_from_a_longer_sampled_path():
    """A sampled agent that took one more turn in the shipped run made it slower than naive; at the naive run's own
    rates (50 s writing 500 tokens at 10 a second, 50 s reading 4,000) its work would have taken 200 s there."""
    from benchmarks.llm_bench import equal_work_ratios, naive_seconds_for, ratios, table

    naive, shipped = _run(100.0, 4000, 4000, 500, 10.0), _run(150.0, 8000, 3000, 1000, 9.0)
    assert naive_seconds_for(shipped, naive) == 200.0
    assert naive_seconds_for(naive, naive) == 100.0  # the same work: the naive run's own seconds
    data = {"runs": {"naive | sema | q1": naive, "shipped | sema | q1": shipped}}
    assert ratios(data, "sema", "shipped", "naive") == [1.5]
    assert equal_work_ratios(data, "sema", "shipped", "naive") == [0.75]
    assert "1.50 (1.50)" in table(data, ["naive", "shipped"]) and "0.75 (0.75)" in table(data, ["naive", "shipped"])


def test_no_estimate_without_the_rates_it_rests_on():
    from benchmarks.llm_bench import naive_seconds_for

    shipped = _run(50.0, 2000, 1000, 200, 10.0)
    assert naive_seconds_for(shipped, _run(60.0, 2000, 2000, 200, None)) is None  # no generation timing
    assert naive_seconds_for(shipped, _run(10.0, 2000, 2000, 200, 10.0)) is None  # writing alone took longer
    assert naive_seconds_for(shipped, _run(60.0, 2000, 2000, 0, 10.0)) is None  # a run that wrote nothing


def test_the_studios_speed_file_is_what_the_benchmark_makes_of_its_results():
    from benchmarks.llm_bench import RESULTS, load, speed
    from core.engine.llm.speed import SPEED_FILE, measured

    shipped = measured(SPEED_FILE)
    assert shipped is not None and shipped == speed(load(RESULTS))
    assert all(m.median_seconds for m in shipped.methods.values())
