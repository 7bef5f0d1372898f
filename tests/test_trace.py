from core.engine.trace import (
    EVENT_KINDS,
    AgentMessage,
    Answer,
    Error,
    Event,
    GeneratedDoc,
    Hit,
    Query,
    Report,
    Retrieval,
    Run,
    Sufficiency,
    Usage,
    Verdict,
    VerdictItem,
    wall_seconds,
)

HIT = Hit(
    snippet_id="s1",
    corpus="c",
    title="t",
    text="x",
    rank=1,
    score=0.5,
    scores={"bm25": 3.2, "dense": 0.7},
    ranks={"bm25": 2, "dense": 1},
)
PAYLOADS = [
    AgentMessage(role="expert", text="hi", data={"a": [1]}, turn=1),
    Query(text="q", purpose="initial", round=0),
    Retrieval(query="q", hits=[HIT], round=1),
    GeneratedDoc(doc_id="gen-1", text="g", gap="missing"),
    Verdict(items=[VerdictItem(doc_id="s1", keep=False, reason="off topic")], accepted=False, reason="none relevant"),
    Sufficiency(round=1, sufficient=False, gaps=["dose"], follow_up_queries=["dose of x"], new_hits=4),
    Report(supporting=["s1 says"], refuting=[], conflicts=["a vs b"], summary="s"),
    Answer(choice="B", text="b", rationale="r", cited=["s1"]),
    Error(message="boom", error_type="LLMError"),
]


def add_event(run: Run, payload, usage: Usage) -> None:
    """The run's next event, numbered in order."""
    run.events.append(Event(run_id=run.id, seq=len(run.events), stage="s", agent="a", payload=payload, usage=usage))


def test_every_kind_round_trips_through_json():
    run = Run(method="m", question="q?", options={"A": "a", "B": "b"}, params={"k": 3})
    for i, payload in enumerate(PAYLOADS):
        add_event(run, payload, Usage(calls=1, prompt_tokens=10, completion_tokens=i, seconds=0.5))
    again = Run.model_validate_json(run.model_dump_json())
    assert again == run
    assert [e.kind for e in again.events] == list(EVENT_KINDS)
    assert isinstance(again.events[2].payload, Retrieval) and again.events[2].payload.hits[0].ranks == {
        "bm25": 2,
        "dense": 1,
    }


def test_totals_sum_usage_and_use_wall_time():
    run = Run(method="m", question="q", started=100.0, finished=112.5)
    for i in range(3):
        add_event(run, Query(text="q"), Usage(calls=1, retrievals=i, prompt_tokens=10, completion_tokens=2, seconds=3))
    totals = run.compute_totals()
    assert (totals.calls, totals.retrievals, totals.prompt_tokens, totals.completion_tokens) == (3, 3, 30, 6)
    assert totals.seconds == 12.5 and totals.tokens == 36


def test_wall_seconds_count_concurrent_calls_once():
    def call(seconds: float, end: float, stage: str = "views") -> Event:
        return Event(
            run_id="r",
            seq=0,
            stage=stage,
            agent="a",
            payload=Query(text="q"),
            usage=Usage(calls=1, seconds=seconds),
            time=end,
        )

    at_once = [call(10, 100.0), call(10, 100.5), call(10, 101.0)]
    assert wall_seconds(at_once) == 11.0  # 90.0 to 101.0, not 30
    one_after_another = [call(10, 100.0), call(5, 105.0)]
    assert wall_seconds(one_after_another) == 15.0
    free = Event(run_id="r", seq=0, stage="views", agent="a", payload=Query(text="q"), time=500.0)
    assert wall_seconds([*at_once, free]) == 11.0 and wall_seconds([free]) == 0.0
