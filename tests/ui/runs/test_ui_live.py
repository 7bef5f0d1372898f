"""A live run hands over its events while it is still running, can be stopped, and reports faults around it."""

from __future__ import annotations

from core.engine.live_run import LiveRun
from core.engine.question import Question
from core.engine.store import RunStore
from tests.fakes import ListRetriever, ScriptedLLM, make_hits
from tests.waiting import Gate, patience, wait_until

MC = Question(text="Which drug treats disease 1?", options={"A": "aspirin", "B": "metformin"})
REPLY = {"reasoning": "Doc 1 says so.", "answer": "B", "cited_ids": ["teaching-1"]}


def test_events_arrive_before_the_run_ends(tmp_path):
    gate = Gate()
    live = LiveRun(
        "medrag",
        MC,
        {},
        llm=ScriptedLLM(gate=gate).enqueue(REPLY),
        retriever=ListRetriever(make_hits(4)),
        store=RunStore(tmp_path / "s.sqlite"),
    ).start()
    wait_until(lambda: gate.held, "the reader's call")
    assert [e.kind for e in live.events] == ["retrieval"] and not live.done  # the reader is still thinking
    gate.open()
    assert live.until_done(patience())
    assert [e.kind for e in live.events] == ["retrieval", "agent_message", "answer"]
    assert live.run.status == "ok" and live.run.answer.cited == ["teaching-1"]


def test_stop_cancels_at_the_next_step(tmp_path):
    store, gate = RunStore(tmp_path / "s.sqlite"), Gate()
    live = LiveRun(
        "medrag",
        MC,
        {},
        llm=ScriptedLLM().enqueue(REPLY),
        retriever=ListRetriever(make_hits(4), hold=lambda query: gate.wait()),
        store=store,
    ).start()
    wait_until(lambda: gate.held, "the retrieval")
    live.cancel()  # during the retrieval; the reader's call never starts
    gate.open()
    assert live.until_done(patience())
    assert live.run.status == "cancelled" and [e.kind for e in live.events] == ["retrieval", "error"]
    assert store.load_run(live.run.id).status == "cancelled"


def test_a_fault_outside_the_method_still_ends_the_run_with_an_error(tmp_path):
    class BrokenStore(RunStore):
        def finish_run(self, run):
            raise OSError("disk full")

    live = LiveRun(
        "cot",
        MC,
        {},
        llm=ScriptedLLM().enqueue({"reasoning": "r", "answer": "A"}),
        retriever=None,
        store=BrokenStore(tmp_path / "s.sqlite"),
    ).start()
    assert live.until_done(patience())
    assert live.run.status == "error"
    assert live.events[-1].kind == "error" and "disk full" in live.events[-1].payload.message
