"""The LLM benchmark reaches the embedded server by URL; its client still runs methods as the studio runs them on
the embedded model (its answer format and reading budget), so the shipped configuration is what it measures."""

from __future__ import annotations

from benchmarks.llm_bench import SeededLLM
from core.llm import LLM, Endpoint
from core.llm.answer_formats import EMBEDDED_ANSWER_FORMAT
from core.question import Question
from core.runner import new_run


def test_the_benchmark_client_answers_in_the_embedded_models_format():
    endpoint = Endpoint(base_url="http://127.0.0.1:9/v1", model="qwen")
    bench = SeededLLM(endpoint, 2000, cache_mode="off")
    assert LLM(endpoint, cache_mode="off").answer_format != EMBEDDED_ANSWER_FORMAT  # a plain URL is an endpoint
    assert bench.answer_format == EMBEDDED_ANSWER_FORMAT and bench.reading_tokens == 2000
    run = new_run("medrag", Question(text="Which hormone lowers blood glucose?", options={"A": "Insulin",
                                                                                        "B": "Glucagon"}),
                  {}, llm=bench, retriever=None)
    assert run.params["answer_format"] == EMBEDDED_ANSWER_FORMAT
