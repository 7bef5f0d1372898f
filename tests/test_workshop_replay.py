"""Replay steps from events alone: one run event by event, several aligned by stage, the answer only at the
reveal, the original pacing; and the reveal's teaching marks for a teaching-pack case."""

from __future__ import annotations

import pytest

from core.engine.question import Question
from core.engine.runner import execute
from core.engine.trace import AgentMessage, Event, Hit, Query, Retrieval, Run
from core.studio.teaching import load_cases
from core.studio.workshop.marks import marks_line, teaching_marks
from core.studio.workshop.replay import PHASES, Replay, phases, reveal_index
from tests.fakes import ListRetriever, ScriptedLLM, make_hits

MC = Question(text="Which drug treats disease 1?", options={"A": "aspirin", "B": "metformin"})


def medrag():
    return execute(
        "medrag",
        MC,
        llm=ScriptedLLM().enqueue({"reasoning": "Doc 1.", "answer": "B", "cited_ids": ["teaching-1"]}),
        retriever=ListRetriever(make_hits(8)),
    )


def cot():
    return execute("cot", MC, llm=ScriptedLLM().enqueue({"reasoning": "r", "answer": "A"}))


def test_one_run_steps_event_by_event_and_the_answer_waits_for_the_reveal():
    run = medrag()  # retrieval, the reader's reply, the answer
    replay = Replay([run])
    assert reveal_index(run) == 1
    assert [s.shown for s in replay.steps] == [(0,), (1,), (3,)]
    assert [s.label for s in replay.steps] == ["the question", "retrieval", "the answer"]
    assert replay.steps[-1].reveal and not any(s.reveal for s in replay.steps[:-1])
    assert [e.kind for e in replay.events(1)] == ["retrieval"]
    assert replay.events(99) == run.events  # clamped to the last step
    assert [e.kind for _, e in replay.new_events(2)] == ["agent_message", "answer"]
    assert replay.stage_starts() == [("the question", 0), ("retrieval", 1), ("the answer", 2)]
    assert [h.snippet_id for h in replay.hits_shown(0)] == [] and len(replay.hits_shown(1, top=5)) == 5


def test_steps_keep_the_original_pacing():
    run = medrag()
    for i, event in enumerate(run.events):
        event.time = run.started + [3.0, 10.0, 10.5][i]
    replay = Replay([run])
    assert [s.delay for s in replay.steps] == [0.0, 3.0, pytest.approx(7.5)]


def test_several_runs_step_together_aligned_by_stage():
    runs = [medrag(), cot()]
    replay = Replay(runs)
    # MedRAG retrieves while CoT, which has nothing but its answer, waits; both reveal together
    assert [s.shown for s in replay.steps] == [(0, 0), (1, 0), (3, 2)]
    assert [s.label for s in replay.steps] == ["the question", "Retrieve / generate", "the answer"]


def test_phases_never_go_back_so_loops_stay_in_the_stage_reached():
    run = Run(method="imedrag", question="q")
    payloads = [
        AgentMessage(role="questioner", text="q1"),
        Query(text="q1"),
        Retrieval(query="q1", hits=[]),
        AgentMessage(role="responder", text="a1"),
        Query(text="q2"),
        AgentMessage(role="answerer", text="A"),
    ]
    run.events = [
        Event(run_id=run.id, seq=i, stage="final answer" if i == 5 else "round 1", agent="Agent", payload=p)
        for i, p in enumerate(payloads)
    ]
    found = phases(run)
    assert found == sorted(found) and found[1] == PHASES.index("Query")
    assert found[4] == PHASES.index("Retrieve / generate")  # the second query stays where the run had reached
    assert found[5] == PHASES.index("Answer")


def test_a_run_without_an_answer_reveals_its_last_event():
    run = execute(
        "medrag",
        MC,
        llm=ScriptedLLM().enqueue("not json at all", "still not json"),
        retriever=ListRetriever(make_hits(3)),
    )
    assert run.status == "error"
    replay = Replay([run])
    assert replay.steps[-1].shown == (len(run.events),) and replay.steps[-2].shown == (len(run.events) - 1,)


def test_teaching_marks_say_where_the_run_met_each_passage():
    case = next(c for c in load_cases() if c.id == "asthma")
    question = case.to_question()
    key, outdated = case.key_passages[0], case.outdated_passages[0]
    hits = [
        Hit(snippet_id=pid, corpus="teaching_pack", title=pid, text=f"text of {pid}", rank=i + 1, score=1.0)
        for i, pid in enumerate([outdated, key, "hpo-1"])
    ]
    run = execute(
        "medrag",
        question,
        {"k": 3},
        llm=ScriptedLLM().enqueue({"reasoning": "The passage says so.", "answer": "A", "cited_ids": [outdated]}),
        retriever=ListRetriever(hits),
    )
    marks = {m.passage_id: m for m in teaching_marks(run, case)}
    assert marks[outdated].met_at == 0 and marks[outdated].cited and marks[outdated].superseded_by
    assert marks[key].met and not marks[key].cited
    assert not marks[case.key_passages[1]].met and marks[case.key_passages[1]].rank is None
    assert marks_line(run, case) == f"met 1 of {len(case.key_passages)} key passages, cited the outdated one"
