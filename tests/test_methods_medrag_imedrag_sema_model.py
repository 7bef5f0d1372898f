"""MedRAG, i-MedRAG and SEMA-RAG on the real embedded model and the real hybrid retriever (over the teaching
pack), one multiple-choice case each, with small budgets. Slow on two cores: marked ``model``.

Each run reads the least its knobs allow and its final reader writes the answer alone: on two cores generated tokens
are what a run's time goes to, and the reasoning that comes with an answer is parsed on the real model in
tests/test_answer_format.py."""

from __future__ import annotations

import json

import pytest

from core.engine.llm.embedded import SHIPPED, EmbeddedServer
from core.engine.question import Question
from core.engine.retrieval import open_retriever
from core.engine.retrieval.default_corpus import teaching_pack_dir
from core.engine.runner import execute
from core.engine.store import RunStore

# The least reading and the answer alone (see above): every agent of each method still runs on the real model.
SMALL = {"max_doc_chars": 500, "answer_format": "answer only"}
# A few minutes each on two free cores; far longer when other work shares them, hence more than the default limit.
pytestmark = [pytest.mark.model, pytest.mark.timeout(2400)]


@pytest.fixture(scope="module")
def teaching():
    cases = json.loads((teaching_pack_dir() / "cases.json").read_text(encoding="utf-8"))
    case = next(c for c in cases if c["id"] == "stemi")
    return Question(text=case["question"], options=case["options"]), open_retriever([teaching_pack_dir()])


def check(run, store: RunStore):
    """Ends with an answer among the options, citing only snippets the run retrieved; the store has it all."""
    assert run.status == "ok", run.events[-1].payload
    assert run.events[-1].kind == "answer" and run.answer.choice in "ABCD"
    retrieved = {h.snippet_id for e in run.events if e.kind == "retrieval" for h in e.payload.hits}
    assert set(run.answer.cited) <= retrieved
    assert run.totals.prompt_tokens > 0 and run.totals.completion_tokens > 0
    assert len(store.load_run(run.id).events) == len(run.events)
    print(
        f"\n{run.method}: {run.answer.choice} cited {run.answer.cited}; {run.totals.calls} calls, "
        f"{run.totals.retrievals} retrievals, {run.totals.prompt_tokens}+{run.totals.completion_tokens} tokens, "
        f"{run.totals.seconds:.0f}s"
    )


def test_medrag_smoke(embedded_llm, teaching, least_lengths):
    question, retriever = teaching
    store = RunStore()
    run = execute("medrag", question, {"k": 2, **SMALL}, llm=embedded_llm, retriever=retriever, store=store)
    check(run, store)
    assert (run.totals.calls, run.totals.retrievals) == (1, 1)


def test_imedrag_smoke(embedded_llm, teaching, least_lengths):
    question, retriever = teaching
    store = RunStore()
    run = execute(
        "imedrag",
        question,
        # The final answer gets room for the longest reply its grammar allows, 8 cited ids of up to 80 characters:
        # on one core the model filled them with invented ids of digits, a token each, and 256 or 320 tokens cut the
        # reply off (the ids it cites are kept only if it was shown them).
        {"rounds": 1, "queries": 1, "k": 2, "answer_tokens": 32, "max_tokens": 700, **SMALL},
        llm=embedded_llm,
        retriever=retriever,
        store=store,
    )
    check(run, store)
    assert (run.totals.calls, run.totals.retrievals) == (3, 1)  # the questioner, the one lookup, the answerer
    assert sum(e.kind == "query" for e in run.events) == 1
    # follow-up budgets are sized to the slot the server itself reports
    reported = EmbeddedServer.get().props()["default_generation_settings"]["n_ctx"]
    assert embedded_llm.context_window == reported == SHIPPED.slot_context


def test_sema_smoke(embedded_llm, teaching, least_lengths):
    question, retriever = teaching
    store = RunStore()
    run = execute("sema", question, {"k": 2, "m": 1, **SMALL}, llm=embedded_llm, retriever=retriever, store=store)
    check(run, store)
    turns = [e.payload for e in run.events if e.kind == "sufficiency"]
    assert 1 <= len(turns) <= 2 and run.totals.calls == 3 + len(turns)
    assert run.totals.retrievals == (1 if turns[0].sufficient else 2)  # a follow-up query when it fell short
    first = next(e.payload.data for e in run.events if e.agent == "E-Agent" and e.kind == "agent_message")
    assert ("follow_up_queries" in first) == (not first["sufficient"])  # judged sufficient, the reply ends there
    assert any(e.kind == "report" for e in run.events)
