"""i-MedRAG's follow-up answers read and write as much as the backend's context window allows (the authors' code
reads up to its model's context length and sets no answer limit), and the final call still fits that window."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from core.engine.llm.tokens import CHARS_PER_TOKEN
from core.engine.methods.imedrag import ANSWER_SHARE, ASSUMED_WINDOW, IMedRAGParams, budgets
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.trace import Hit
from tests.fakes import ListRetriever, ScriptedLLM
from tests.test_methods_imedrag import MC

LOOKUP = "give the id of the document it comes from"
FINAL = "ids of the documents that support it"


def long_hits(n: int, chars: int) -> list[Hit]:
    """Snippets of about ``chars`` characters each, all mentioning disease 1 so every query finds them."""
    return [
        Hit(
            snippet_id=f"teaching-{i}",
            corpus="teaching",
            title=f"Doc {i}",
            text=(f"disease 1 fact {i} " * (chars // 16 + 1))[:chars],
            rank=i + 1,
            score=1.0 / (i + 1),
        )
        for i in range(n)
    ]


def scripted(answer_chars: int) -> ScriptedLLM:
    """Queries at their 200-character limit; each follow-up answer ``answer_chars`` long, citing its first document."""
    counter = itertools.count(1)

    def write_queries(_messages):
        return {
            "analysis": "need more",
            "queries": [f"query {next(counter)} about disease 1 ".ljust(200, "x") for _ in range(3)],
        }

    def answer(messages):
        first_id = messages[1]["content"].split("[", 1)[1].split("]", 1)[0]
        return f"[{first_id}] " + "a" * answer_chars

    return (
        ScriptedLLM()
        .on("write 3 concise", write_queries)
        .on(LOOKUP, answer)
        .on(FINAL, {"reasoning": "r", "answer": "B", "cited_ids": []})
    )


def with_window(llm: ScriptedLLM, window: int | None) -> ScriptedLLM:
    llm.endpoint = dataclasses.replace(llm.endpoint, context_window=window)
    return llm


def calls(llm: ScriptedLLM, text: str) -> list[dict]:
    return [c for c in llm.calls if text in c["messages"][1]["content"]]


def tokens(call: dict) -> int:
    """A call's prompt in the conservative count the budgets use, plus what it may write."""
    return sum(len(m["content"]) for m in call["messages"]) // CHARS_PER_TOKEN + call["max_tokens"]


@pytest.mark.parametrize("window", [4096, 8192])
def test_every_call_fits_the_window_even_when_each_answer_writes_its_whole_budget(window):
    share = budgets(IMedRAGParams(), MC, window).answer_tokens
    llm = with_window(scripted(answer_chars=share * CHARS_PER_TOKEN), window)
    run = execute("imedrag", MC, llm=llm, retriever=ListRetriever(long_hits(40, 1500)))

    assert run.status == "ok", run.events[-1].payload
    lookups, final = calls(llm, LOOKUP), calls(llm, FINAL)
    assert len(lookups) == 12 and all(c["max_tokens"] == share for c in lookups)
    assert max(tokens(c) for c in llm.calls) <= window
    # the final call holds all 12 answers whole, and the largest call is close to the window: little is wasted
    assert final[0]["messages"][1]["content"].count("a" * share * CHARS_PER_TOKEN) == 12
    assert tokens(lookups[0]) > 0.9 * window


def test_fewer_follow_ups_write_longer_answers_but_documents_keep_most_of_the_window():
    one = budgets(IMedRAGParams(rounds=1, queries=1), MC, 8192)
    twelve = budgets(IMedRAGParams(), MC, 8192)
    assert twelve.answer_tokens < one.answer_tokens == int(8192 * ANSWER_SHARE)
    assert one.doc_chars >= 0.75 * 8192 * CHARS_PER_TOKEN  # the toolkit gives Llama-3's documents 7,168 of 8,192


def test_a_large_window_reads_all_32_snippets_and_answers_at_length():
    window = 128_000  # Llama-3.1's, for which the authors read up to 128,000 tokens
    llm = with_window(scripted(answer_chars=50), window)
    run = execute("imedrag", MC, llm=llm, retriever=ListRetriever(long_hits(40, 1500)))

    assert run.status == "ok"
    lookup = calls(llm, LOOKUP)[0]
    assert all(f"[teaching-{i}]" in lookup["messages"][1]["content"] for i in range(32))
    assert lookup["max_tokens"] > 8000  # far beyond the three sentences follow-ups were once held to


def test_an_endpoint_that_does_not_say_is_read_as_the_authors_model_window():
    llm = with_window(scripted(answer_chars=50), None)
    execute("imedrag", MC, llm=llm, retriever=ListRetriever(long_hits(40, 1500)))
    assert max(tokens(c) for c in llm.calls) <= ASSUMED_WINDOW
    assert calls(llm, LOOKUP)[0]["max_tokens"] == budgets(IMedRAGParams(), MC, ASSUMED_WINDOW).answer_tokens


def test_the_knobs_cap_what_the_window_would_allow():
    params = IMedRAGParams(max_doc_chars=2000, answer_tokens=100)
    assert budgets(params, MC, 128_000).model_dump() == {"doc_chars": 2000, "answer_tokens": 100}
    llm = with_window(scripted(answer_chars=50), 128_000)
    execute("imedrag", MC, params.model_dump(), llm=llm, retriever=ListRetriever(long_hits(40, 1500)))
    lookup = calls(llm, LOOKUP)[0]
    documents = lookup["messages"][1]["content"].split("\n\nQuery:", 1)[0].removeprefix("Documents:\n")
    assert lookup["max_tokens"] == 100 and 1500 < len(documents) <= 2000


def test_a_long_question_leaves_less_for_each_answer():
    long = Question(text="A patient with disease 1. " * 200, options=MC.options)
    short, longer = (budgets(IMedRAGParams(), q, 8192) for q in (MC, long))
    assert longer.answer_tokens < short.answer_tokens and longer.doc_chars > short.doc_chars
