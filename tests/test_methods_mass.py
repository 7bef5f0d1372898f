"""MASS-RAG control flow with a scripted model: concurrent views, the Extractor's spans checked word for
word, the Answer Agent's automatic default, the single-view ablation, failures."""

from __future__ import annotations

import pytest

from core.engine.question import Question
from core.engine.runner import execute
from core.studio.teaching import load_cases
from tests.fakes import ListRetriever, ScriptedLLM, make_hits, together

MC = Question(text="Which drug is first line for disease 1?", options={"A": "aspirin", "B": "metformin"})
OPEN = Question(text="What is the first-line drug for disease 1?")
SPANS = {
    "spans": [
        {"doc_id": "teaching-1", "text": "fact number 1 about disease 1"},  # verbatim
        {"doc_id": "teaching-2", "text": "disease 2 is treated with metformin"},  # invented
        {"doc_id": "teaching-3", "text": "fact number 4 about"},  # verbatim, but in teaching-4
        {"doc_id": "teaching-0", "text": "Fact  number 0\nabout disease 0"},  # verbatim up to case and whitespace
    ]
}


def synthesis(messages):
    text = messages[1]["content"]
    return {
        "reasoning": "The views agree on B.",
        "answer": "B" if "Options:" in text else "metformin",
        "cited_ids": ["teaching-1", "teaching-2", "teaching-4"],
        "followed_view": "Reasoner",
    }


def scripted(views_together: int = 1) -> ScriptedLLM:
    """``views_together``: the views answer only once that many of them are reading at the same moment."""
    meet = together(views_together)
    return (
        ScriptedLLM()
        .on("You are the Summarizer.", meet({"summary": "Disease 1 has a first-line drug.", "doc_ids": ["teaching-1"]}))
        .on("You are the Extractor.", meet(SPANS))
        .on("You are the Reasoner.", meet({"inference": "Combining documents, B fits.", "doc_ids": ["teaching-3"]}))
        .on(
            "You are the Answer Agent.",
            lambda m: {
                "reasoning": "From the view.",
                "answer": ("B" if "Options:" in m[1]["content"] else "metformin"),
            },
        )
        .on("You are the Synthesis Agent.", synthesis)
    )


def events(run, kind):
    return [e for e in run.events if e.kind == kind]


def synthesis_prompt(llm) -> str:
    prompts = [c["messages"][1]["content"] for c in llm.calls]
    return next(p for p in prompts if "You are the Synthesis Agent." in p)


def test_views_are_reconciled_and_a_span_that_is_not_verbatim_is_flagged():
    llm = scripted()
    run = execute("mass", MC, llm=llm, retriever=ListRetriever(make_hits(5)))

    assert run.status == "ok" and run.answer.choice == "B"
    assert {e.agent for e in run.events if e.stage == "views"} == {"Summarizer", "Extractor", "Reasoner"}
    check = events(run, "verdict")[0]
    assert check.stage == "span check"
    assert [(i.doc_id, i.keep) for i in check.payload.items] == [
        ("teaching-1", True),
        ("teaching-2", False),
        ("teaching-4", True),
        ("teaching-0", True),
    ]
    assert check.payload.items[1].reason == '"disease 2 is treated with metformin" not verbatim in teaching-2'
    assert "not in teaching-3 as named" in check.payload.items[2].reason
    assert check.payload.reason == "3 of 4 spans are verbatim"

    prompt = synthesis_prompt(llm)
    assert '[teaching-1] "fact number 1 about disease 1"' in prompt and "treated with metformin" not in prompt
    assert "Candidate answers" not in prompt  # the Answer Agent is off for multiple choice by default
    assert not any(e.agent == "Answer Agent" for e in run.events)
    # cited: only ids the views rest on (teaching-2's span was invented, so teaching-2 is not among them)
    assert run.answer.cited == ["teaching-1", "teaching-4"]
    assert run.answer.note == "followed the Reasoner view"
    assert (run.totals.calls, run.totals.retrievals) == (4, 1)


def test_open_questions_get_an_answer_agent_per_view_by_default():
    llm = scripted()
    run = execute("mass", OPEN, llm=llm, retriever=ListRetriever(make_hits(5)))

    assert run.status == "ok" and run.answer.text == "metformin" and run.answer.choice is None
    candidates = [e for e in run.events if e.agent == "Answer Agent"]
    assert sorted(e.payload.role for e in candidates) == [
        "answerer (extractor)",
        "answerer (reasoner)",
        "answerer (summarizer)",
    ]
    assert "Candidate answers:\n- Summarizer view: metformin" in synthesis_prompt(llm)
    assert run.answer.note.startswith("followed the Reasoner view; candidates: Summarizer metformin")


def test_answer_agent_can_be_forced_on_for_multiple_choice():
    run = execute("mass", MC, {"answer_agent": True}, llm=scripted(), retriever=ListRetriever(make_hits(5)))

    assert run.status == "ok" and sum(e.agent == "Answer Agent" for e in run.events) == 3
    assert run.answer.note.endswith("candidates: Summarizer B, Extractor B, Reasoner B")


def test_views_read_the_documents_concurrently():
    llm = scripted(views_together=3)
    run = execute("mass", MC, llm=llm, retriever=ListRetriever(make_hits(5)))

    assert run.status == "ok" and llm.max_active == 3  # each view answered only once all three were reading


def test_single_view_ablation():
    llm = scripted()
    run = execute("mass", MC, {"views": ["reasoner"]}, llm=llm, retriever=ListRetriever(make_hits(5)))

    assert run.status == "ok" and [e.agent for e in run.events if e.stage == "views"] == ["Reasoner"]
    assert not events(run, "verdict") and len(llm.calls) == 2
    schema = llm.calls[-1]["schema"].model_json_schema()
    assert schema["properties"]["followed_view"]["enum"] == ["Reasoner", "combined"]
    # the synthesis named none of the documents the Reasoner rests on: the answer cites the followed view's
    assert run.answer.cited == ["teaching-3"] and "it named no document" in run.answer.note


def test_an_answer_that_names_no_document_cites_the_views_it_followed():
    llm = scripted().on(
        "You are the Synthesis Agent.",
        {"reasoning": "The views agree on B.", "answer": "B", "cited_ids": [], "followed_view": "combined"},
    )
    llm.rules.insert(0, llm.rules.pop())  # the first matching rule wins
    run = execute("mass", MC, llm=llm, retriever=ListRetriever(make_hits(5)))

    # every view's documents, in view order: the Summarizer's, the Extractor's that were verbatim, the Reasoner's
    assert run.status == "ok" and run.answer.cited == ["teaching-1", "teaching-4", "teaching-0", "teaching-3"]


def test_a_quote_that_is_not_verbatim_is_flagged_in_full():
    long = "fact number 2 about disease 2 " * 3 + "and some words the document never had"
    llm = scripted().on("You are the Extractor.", {"spans": [{"doc_id": "teaching-2", "text": long}]})
    llm.rules.insert(0, llm.rules.pop())
    run = execute("mass", MC, llm=llm, retriever=ListRetriever(make_hits(5)))

    [item] = events(run, "verdict")[0].payload.items
    assert not item.keep and "the document never had" in item.reason and "…" not in item.reason


def test_a_reply_that_never_parses_ends_in_an_error_event_with_the_trace_kept():
    llm = scripted().on("You are the Synthesis Agent.", "B, clearly")
    llm.rules.insert(0, llm.rules.pop())  # the first matching rule wins
    run = execute("mass", MC, llm=llm, retriever=ListRetriever(make_hits(5)))

    assert run.status == "error" and run.events[-1].kind == "error"
    assert len(events(run, "retrieval")) == 1 and len(events(run, "verdict")) == 1


def test_no_documents_is_a_clear_error():
    run = execute("mass", MC, llm=scripted(), retriever=ListRetriever([]))

    assert run.status == "error" and "retrieval returned no documents" in run.events[-1].payload.message


@pytest.mark.model
def test_smoke_on_the_embedded_model(embedded_llm, least_lengths):
    from core.engine.retrieval import open_retriever  # open_retriever(): the default corpus, HPO and the teaching pack

    case = next(c for c in load_cases() if c.id == "safe-sleep")
    run = execute(
        "mass",
        case.to_question(),
        # every view and the synthesis on two documents and the least reading; one span, and the synthesis writes
        # the answer alone
        {"k": 2, "n_spans": 1, "max_doc_chars": 500, "answer_format": "answer only"},
        llm=embedded_llm,
        retriever=open_retriever(),
    )

    assert run.status == "ok", run.events[-1].payload
    assert run.answer.choice in case.options
    assert {e.agent for e in run.events if e.stage == "views"} == {"Summarizer", "Extractor", "Reasoner"}
    check = events(run, "verdict")[0].payload
    assert all("verbatim in" in i.reason for i in check.items)
    assert run.answer.note.startswith(("followed the", "combined the views"))
    assert set(run.answer.cited) <= {h.snippet_id for h in events(run, "retrieval")[0].payload.hits}
