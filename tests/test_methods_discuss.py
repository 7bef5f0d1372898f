"""Discuss-RAG control flow with a scripted model: verification accepts or falls back to CoT, the discussion
runs its experts concurrently and stops early, ablations change the flow, failures end in an error event."""

from __future__ import annotations

import time

import pytest

from core.question import Question
from core.runner import execute
from core.teaching import load_cases
from tests.fakes import ListRetriever, ScriptedLLM, make_hits

MC = Question(text="Which drug is first line for disease 1?", options={"A": "aspirin", "B": "metformin"})
OPEN = Question(text="What is the first-line drug for disease 1?")
EXPERTS = {"experts": [{"role": "Endocrinologist", "why": "glucose control"},
                       {"role": "Pharmacologist", "why": "drug mechanisms"},
                       {"role": "Endocrinologist", "why": "a second opinion"}]}
SUMMARY = "Knowing the mechanism of first-line drugs for disease 1 is key."
DISTILLED = "First-line drugs for disease 1 and how they act."
ANSWER = {"reasoning": "The kept document names it.", "answer": "B", "cited_ids": ["teaching-1", "teaching-9"]}


def verdict(keep: set[str], accept: bool):
    """A decision-maker judging every snippet it was shown (their ids are in its prompt)."""
    def reply(messages):
        ids = [line[1:].split("]")[0] for line in messages[1]["content"].splitlines() if line.startswith("[teaching-")]
        return {"judgments": [{"doc_id": i, "reason": "on topic" if i in keep else "off topic", "keep": i in keep}
                              for i in ids], "accept": accept, "reason": "relevant" if accept else "misleading"}
    return reply


def scripted(keep: set[str] = frozenset({"teaching-1", "teaching-4"}), accept: bool = True,
             nothing_to_add_in_turn: int | None = None, delay: float = 0.0) -> ScriptedLLM:
    def expert(messages):
        if "(none yet)" in messages[1]["content"]:  # the first turn
            return {"insight": "Know the drug classes."}
        done = nothing_to_add_in_turn == 2
        return {"nothing_to_add": done, "insight": "" if done else "Know the drug doses."}

    return (ScriptedLLM(delay=delay)
            .on("You are the recruiter", EXPERTS)
            .on("You are the summarizer", {"summary": SUMMARY})
            .on("You are the verifier", {"summary": DISTILLED})
            .on("You are the decision-maker", verdict(set(keep), accept))
            .on("Do not answer the question or pick an option.", expert)
            .on("the ids of the documents you used", ANSWER)
            .on("commit to one answer", {"reasoning": "From memory.", "answer": "A"}))


def stages(run) -> list[str]:
    return [e.stage for e in run.events]


def test_accepted_snippets_answer_with_only_the_kept_ones():
    llm, retriever = scripted(), ListRetriever(make_hits(12))
    run = execute("discuss", MC, llm=llm, retriever=retriever)

    assert run.status == "ok" and run.answer.choice == "B"
    recruit = run.events[0]
    assert recruit.agent == "Recruiter" and [e["role"] for e in recruit.payload.data["experts"]][:2] == \
        ["Endocrinologist", "Pharmacologist"]
    # a repeated specialty stays a separate expert in the trace
    assert {e.agent for e in run.events if e.payload.kind == "agent_message" and e.payload.role == "expert"} == \
        {"Endocrinologist", "Pharmacologist", "Endocrinologist 3"}
    query = next(e.payload for e in run.events if e.kind == "query")
    assert query.text == f"{MC.text}\n{DISTILLED}" and retriever.queries == [query.text]
    verdicts = [e.payload for e in run.events if e.kind == "verdict"]
    assert len(verdicts) == 1 and verdicts[0].accepted is True
    assert len(verdicts[0].items) == 9
    assert {i.doc_id for i in verdicts[0].items if i.keep} == {"teaching-1", "teaching-4"}
    reader_prompt = llm.calls[-1]["messages"][1]["content"]
    assert "[teaching-1]" in reader_prompt and "[teaching-4]" in reader_prompt and "[teaching-2]" not in reader_prompt
    assert run.answer.cited == ["teaching-1"]  # teaching-9 was dropped, so it cannot be cited
    assert "CoT fallback" not in stages(run) and run.answer.note.startswith("answered from the 2 of 9")
    # recruiter, 3 experts x 2 turns, 2 summaries, verifier, decision-maker, reader
    assert (run.totals.calls, run.totals.retrievals) == (12, 1)


def test_rejected_snippets_fall_back_to_cot_and_say_so():
    llm = scripted(accept=False)
    run = execute("discuss", MC, llm=llm, retriever=ListRetriever(make_hits(12)))

    assert run.status == "ok" and run.answer.choice == "A"
    assert stages(run)[-2:] == ["CoT fallback", "final answer"]
    assert run.answer.note.startswith("CoT fallback: the decision-maker rejected the snippets (misleading)")
    assert run.answer.cited == []
    assert next(e.payload for e in run.events if e.kind == "verdict").accepted is False
    assert not any("the ids of the documents you used" in c["messages"][1]["content"] for c in llm.calls)


def test_acceptance_that_keeps_no_snippet_falls_back():
    run = execute("discuss", MC, llm=scripted(keep=set(), accept=True), retriever=ListRetriever(make_hits(12)))

    assert "CoT fallback" in stages(run) and "kept no snippet" in run.answer.note


def test_experts_of_a_turn_speak_concurrently():
    delay = 0.3
    llm = scripted(delay=delay)
    run = execute("discuss", MC, llm=llm, retriever=ListRetriever(make_hits(12)))

    assert run.status == "ok" and llm.max_active == 3
    for turn in (1, 2):
        events = [e for e in run.events if e.stage == f"brainstorm turn {turn}"]
        before = run.events[events[0].seq - 1]  # the recruiter, or the previous turn's summarizer
        experts_done = max(e.time for e in events if e.agent != "Summarizer")
        assert experts_done - before.time < 2 * delay  # one delay for three experts, not three


def test_discussion_ends_when_no_expert_has_anything_to_add():
    llm = scripted(nothing_to_add_in_turn=2)
    run = execute("discuss", MC, {"turns": 3}, llm=llm, retriever=ListRetriever(make_hits(12)))

    summarizers = [e for e in run.events if e.agent == "Summarizer"]
    assert [e.stage for e in summarizers] == ["brainstorm turn 1"]
    assert "brainstorm turn 3" not in stages(run) and run.status == "ok"


def test_ablations_change_the_flow():
    llm = scripted()
    no_talk = execute("discuss", OPEN, {"brainstorm": False}, llm=llm, retriever=ListRetriever(make_hits(12)))
    assert no_talk.status == "ok" and no_talk.answer.text == "B"
    assert not any(e.agent in ("Recruiter", "Summarizer", "Verifier") for e in no_talk.events)
    assert next(e.payload for e in no_talk.events if e.kind == "query").text == OPEN.text

    no_check = execute("discuss", MC, {"verify": False, "k": 4}, llm=scripted(), retriever=ListRetriever(make_hits(12)))
    assert no_check.status == "ok" and not any(e.kind == "verdict" for e in no_check.events)
    assert no_check.answer.note == "verification off: answered from all 4 snippets"
    assert no_check.answer.cited == ["teaching-1"]


def test_no_snippets_means_rejection():
    run = execute("discuss", MC, {"brainstorm": False}, llm=scripted(), retriever=ListRetriever([]))

    assert run.status == "ok" and "retrieval returned no snippets" in run.answer.note


def test_a_reply_that_never_parses_ends_in_an_error_event_with_the_trace_kept():
    llm = scripted().on("You are the decision-maker", "keep them all")  # rules are tried in order: the first wins
    llm.rules.insert(0, llm.rules.pop())
    started = time.perf_counter()
    run = execute("discuss", MC, llm=llm, retriever=ListRetriever(make_hits(12)))

    assert run.status == "error" and run.answer is None and time.perf_counter() - started < 10
    assert run.events[-1].kind == "error" and "could not be parsed" in run.events[-1].payload.message
    assert [e.kind for e in run.events].count("retrieval") == 1  # everything before the failure is kept



@pytest.mark.model
def test_smoke_on_the_embedded_model(embedded_llm):
    from core.retrieval import open_retriever  # open_retriever(): the default corpus, HPO and the teaching pack

    case = next(c for c in load_cases() if c.id == "paracetamol")
    run = execute("discuss", case.to_question(), {"n_experts": 2, "turns": 1, "k": 3,
                                                              "max_doc_chars": 900}, llm=embedded_llm,
                  retriever=open_retriever())

    assert run.status == "ok", run.events[-1].payload
    assert run.answer.choice in case.options
    assert run.events[0].agent == "Recruiter" and len(run.events[0].payload.data["experts"]) == 2
    assert next(e.payload for e in run.events if e.kind == "query").text.startswith(case.question)
    verdict = next(e.payload for e in run.events if e.kind == "verdict")
    assert len(verdict.items) == 3 and verdict.accepted is not None
    assert run.answer.note.startswith("CoT fallback") == (not verdict.accepted)
    assert set(run.answer.cited) <= {i.doc_id for i in verdict.items if i.keep}
