"""A reply that stops before the model finished says so: a call the token budget ended (the endpoint's
``finish_reason: length``, from a local server that streams like one) is marked in the trace, and an answer whose
reasoning stops at the grammar's bound mid-sentence ends in an ellipsis with a note; finished ones carry no mark."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.engine.llm import LLM, Endpoint
from core.engine.methods.answer import REASONING_CHARS
from core.engine.methods.bounds import char_bounds, stopped_at
from core.engine.methods.contract import RunContext
from core.engine.trace import AgentMessage, Answer, Event, Run, Usage
from tests.fake_endpoint import FakeEndpoint, streams

WORDS = "Insulin is made by the beta cells of the pancreas and moves glucose into cells. "


@pytest.mark.parametrize(("finish_reason", "cut"), [("length", True), ("stop", False)])
def test_a_call_the_token_budget_ended_is_marked_in_the_trace(finish_reason, cut):
    server = FakeEndpoint(streams("Insulin is made by the beta cel", finish_reason=finish_reason))
    try:
        llm = LLM(Endpoint(base_url=server.url, model="fake", max_retries=0), cache_mode="off")
        ctx = RunContext(Run(method="cot", question="Which hormone lowers blood glucose?"), llm)
        ctx.ask(
            [{"role": "user", "content": "Say what insulin does."}],
            stage="s",
            agent="Writer",
            role="writer",
            max_tokens=8,
        )
    finally:
        server.close()
    [event] = ctx.run.events
    assert event.payload.cut is cut


def test_a_reasoning_at_the_grammars_bound_is_cut_only_mid_sentence():
    stopped, bounds = (WORDS * 10)[:REASONING_CHARS], char_bounds("cot")
    assert REASONING_CHARS in bounds and stopped_at(stopped, bounds) == REASONING_CHARS
    assert stopped_at(stopped.rsplit(".", 1)[0] + ".", bounds) is None  # as long, but its last sentence ended
    assert stopped_at(WORDS, bounds) is None  # short and unfinished-looking is not the bound's doing


def answered(rationale: str, last_call_cut: bool = False) -> Run:
    run = Run(method="cot", question="Which hormone lowers blood glucose?", options={"A": "Insulin", "B": "Glucagon"})
    payloads = [
        AgentMessage(role="reasoner", text="{}", data={"answer": "A", "reasoning": rationale}, cut=last_call_cut),
        Answer(choice="A", text="Insulin", rationale=rationale, answer_format="answer first"),
    ]
    run.events = [
        Event(
            run_id=run.id,
            seq=i,
            stage="answer",
            agent="Clinician",
            payload=p,
            usage=Usage(calls=1, prompt_tokens=90, completion_tokens=40, seconds=2),
        )
        for i, p in enumerate(payloads)
    ]
    run.answer, run.status, run.finished = payloads[-1], "ok", run.started + 2
    run.totals = run.compute_totals()
    return run


def card(run: Run) -> AppTest:
    def script():
        import streamlit as st

        from ui.runs.trace_view import render_run

        render_run(st.session_state["run"], key="t")

    at = AppTest.from_function(script, default_timeout=20)
    at.session_state["run"] = run
    return at.run()


@pytest.mark.parametrize(
    ("run", "note", "notes"),
    [
        (answered((WORDS * 10)[:REASONING_CHARS]), "stops mid-sentence at 600 characters", 1),
        (answered("Insulin is made by the beta cel", last_call_cut=True), "Cut off by its token budget", 2),
        (answered(WORDS), None, 0),
    ],
)
def test_the_answer_card_says_where_a_reasoning_was_stopped(run, note, notes):
    at = card(run)
    assert not at.exception
    captions = [c.value for c in at.caption if "content_cut" in c.value]
    assert len(captions) == notes  # a call the budget ended is marked under the answer and under the call
    assert all(note in c for c in captions)
    assert any(m.value.endswith(" …") for m in at.markdown) is (note is not None)
