"""A model that writes fewer items than a list asks for (one follow-up query where three were asked), also after the
repair: the run goes on with what it wrote and the trace says what is missing, for every count in every method. Only
a reply that cannot be used at all (no item where at least one is needed) ends a run.

The server is an OpenAI-compatible one of no known family (the generic profile, whose strict form states the counts
only in words), serving a model that writes one item per list (``tests/providers/fakes.py:ShortListServer``); the
authors' code, too, uses whatever list its parser found (Teddy-XiongGZ/MedRAG ``src/medrag.py:i_medrag_answer``,
ll0ruc/MedRGAG ``src/llm_by_gpt.py:extract_knowledge_str``, ``extract_ids``)."""

from __future__ import annotations

from typing import Any

import pytest

from core.engine.llm import LLMError
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.trace import AgentMessage, Run, Usage, Verdict
from tests.fakes import ListRetriever, ScriptedLLM, make_hits
from tests.providers.fakes import ShortListServer
from tests.providers.matrix import QUESTION, agent_messages, client, error_of, retriever

# method: (knobs at the papers' counts where the run stays small, what each agent that writes a counted list says)
CASES: dict[str, tuple[dict[str, Any], dict[str, list[str]]]] = {
    "imedrag": ({"rounds": 1, "queries": 3, "k": 3}, {"Questioner": ["asked for 3 queries, the model wrote 1"]}),
    "discuss": (
        {"n_experts": 3, "turns": 0, "k": 4, "judge_each": True},
        {
            "Recruiter": ["asked for 3 experts, the model wrote 1"],
            "Decision-maker": ["asked for 4 snippet judgments, the model wrote 1"],
        },
    ),
    "sema": ({"k": 4, "m": 3, "t_max": 2}, {"E-Agent": ["asked for 3 follow-up queries, the model wrote 1"]}),
    "medrgag": (
        {"per_source_k": 4, "n_retrieved": 2, "n_points": 3, "n_generated": 3, "n_selected": 2},
        {
            "Explorer": ["asked for 3 missing knowledge points, the model wrote 1"],
            "Integrator": ["asked for 5 documents mapped, the model wrote 1"],
        },
    ),
}


def said(run: Run) -> dict[str, list[str]]:
    """Each agent's shortfalls, in the words the trace gives them."""
    found: dict[str, list[str]] = {}
    for event in run.events:
        if isinstance(event.payload, AgentMessage) and event.payload.shortfalls:
            found.setdefault(event.agent, []).extend(s.text for s in event.payload.shortfalls)
    return found


@pytest.fixture(scope="module")
def server():
    with ShortListServer() as server:
        yield server


@pytest.mark.parametrize("method", list(CASES))
def test_a_list_written_short_is_used_as_written_and_the_trace_says_so(server, method):
    knobs, expected = CASES[method]
    seen = len(server.requests)
    run = execute(method, QUESTION, knobs, llm=client(server), retriever=retriever())
    assert run.status == "ok", error_of(run)
    found = said(run)
    assert {agent: sorted(set(texts)) for agent, texts in found.items()} == expected
    # each short reply was repaired once (the server's model wrote short again), and nothing else was asked twice
    messages = agent_messages(run)
    assert len(server.requests) - seen == len(messages) + sum(bool(m.shortfalls) for m in messages)
    repairs = [r for r in server.requests[seen:] if "a list is shorter than asked" in str(r["messages"][-1])]
    assert len(repairs) == sum(bool(m.shortfalls) for m in messages)


def test_what_the_short_list_held_goes_on_through_the_method(server):
    """i-MedRAG looks up the one query it got; MedRGAG writes its other documents from the question, as it does when
    the explorer names fewer points than documents; an unjudged or unmapped snippet says so."""
    run = execute("imedrag", QUESTION, CASES["imedrag"][0], llm=client(server), retriever=retriever())
    assert [e.payload.kind for e in run.events].count("query") == 1
    assert sum(e.agent == "Responder" for e in run.events) == 1
    run = execute("medrgag", QUESTION, CASES["medrgag"][0], llm=client(server), retriever=retriever())
    gaps = [e.payload.gap for e in run.events if e.payload.kind == "generated_doc"]
    assert len(gaps) == 3 and gaps.count("(none: written from the question alone)") == 2
    (selection,) = [e.payload for e in run.events if isinstance(e.payload, Verdict) and e.agent == "Integrator"]
    assert sum("covers: not mapped" in item.reason for item in selection.items) == 4
    run = execute("discuss", QUESTION, CASES["discuss"][0], llm=client(server), retriever=retriever())
    (verdict,) = [e.payload for e in run.events if isinstance(e.payload, Verdict)]
    assert sum(item.reason == "not judged" for item in verdict.items) == 3


def scripted_queries(*replies: dict[str, Any]) -> ScriptedLLM:
    """i-MedRAG's questioner answering with ``replies`` in turn, and a reader that answers."""
    llm = ScriptedLLM().enqueue(*replies)
    llm.on("give the id of the document it comes from", "A fact.")
    llm.on("ids of the documents that support it", {"reasoning": "r", "answer": "A", "cited_ids": []})
    return llm


MC = Question(text="Which hormone lowers blood glucose?", options={"A": "Insulin", "B": "Glucagon"})


def imedrag(llm: ScriptedLLM) -> Run:
    return execute("imedrag", MC, {"rounds": 1, "queries": 3}, llm=llm, retriever=ListRetriever(make_hits(4)))


def test_a_repair_that_completes_the_list_is_taken():
    llm = scripted_queries({"analysis": "a", "queries": ["q1"]}, {"analysis": "a", "queries": ["q1", "q2", "q3"]})
    run = imedrag(llm)
    assert run.status == "ok", run.events[-1].payload
    (asked,) = [e.payload for e in run.events if e.agent == "Questioner" and isinstance(e.payload, AgentMessage)]
    assert asked.data["queries"] == ["q1", "q2", "q3"] and asked.shortfalls == []
    assert "asked for 3 queries, the model wrote 1" in llm.calls[1]["messages"][-1]["content"]  # what the repair says


def test_a_repair_that_cannot_be_used_leaves_the_short_list_it_mended():
    run = imedrag(scripted_queries({"analysis": "a", "queries": ["q1", "q2"]}, "not JSON at all"))
    assert run.status == "ok", run.events[-1].payload
    assert said(run) == {"Questioner": ["asked for 3 queries, the model wrote 2"]}
    assert [e.payload.text for e in run.events if e.payload.kind == "query"] == ["q1", "q2"]


def test_a_repair_call_that_fails_leaves_the_short_list_and_says_why():
    def unreachable(_messages):
        raise LLMError("could not reach the endpoint", usage=Usage(calls=1, seconds=0.5))

    run = imedrag(scripted_queries({"analysis": "a", "queries": ["q1"]}, unreachable))
    assert run.status == "ok", run.events[-1].payload
    (asked,) = [e for e in run.events if e.agent == "Questioner" and isinstance(e.payload, AgentMessage)]
    assert [s.text for s in asked.payload.shortfalls] == ["asked for 3 queries, the model wrote 1"]
    assert any("could not reach the endpoint" in note for note in asked.payload.notes)
    assert asked.usage.calls == 2  # the failed repair is counted


def test_no_item_at_all_where_one_is_needed_ends_the_run():
    run = imedrag(scripted_queries({"analysis": "a", "queries": []}, {"analysis": "a", "queries": []}))
    assert run.status == "error"
    assert "List should have at least 1 item" in run.events[-1].payload.message
