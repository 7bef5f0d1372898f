"""SEMA-RAG control flow with a scripted model: early stop, T_max, concurrent follow-ups, ablations, failures."""

from __future__ import annotations

import threading

import pytest

from core.engine.llm.cache import ResponseCache
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from core.engine.trace import Hit
from tests.fakes import ListRetriever, ScriptedLLM, make_hits
from tests.waiting import patience

MC = Question(text="Which drug is first line for disease 1?", options={"A": "aspirin", "B": "metformin"})
SCHEMA = {
    "intent": "first-line therapy",
    "entities": ["disease 1"],
    "constraints": ["adult"],
    "initial_query": "first line drug disease 1",
}
MORE = "write 3 short, specific search queries"  # only in the E-Agent's prompt when more turns remain
LAST = "and list the facts still missing (none when sufficient)"  # only in its last-turn prompt


def judged(sufficient: bool) -> dict:
    """Judged sufficient, the reply ends there; judged short, it names exactly m=3 follow-ups, which run."""
    if sufficient:
        return {"gaps": [], "sufficient": True}
    return {
        "gaps": ["dose of the drug"],
        "sufficient": False,
        "follow_up_queries": [f"fact number {i} dose" for i in range(3)],
    }


def report_citing_first_document(messages):
    first_id = messages[1]["content"].split("[", 1)[1].split("]", 1)[0]
    return {
        "supporting": [{"claim": "B is first line", "ids": [first_id]}],
        "refuting": [{"claim": "A is not", "ids": []}],
        "conflicts": [],
        "summary": "B.",
    }


def scripted(sufficient_at: int | None, cache=None) -> ScriptedLLM:
    """An E-Agent that judges the evidence sufficient at turn ``sufficient_at`` (never, for None)."""
    turns = iter(range(1, 10))

    def explorer(_messages):
        turn = next(turns)
        return judged(turn == sufficient_at)

    return (
        ScriptedLLM(cache=cache)
        .on("You are the I-Agent", SCHEMA)
        .on("You are the E-Agent", explorer)
        .on("You are the A-Agent. Weigh", report_citing_first_document)
        .on(
            "Based on the evidence report",
            lambda m: {
                "reasoning": "per report",
                "answer": "B",
                "cited_ids": [m[1]["content"].split("[")[-1].split("]")[0], "teaching-99"],
            },
        )
    )


def kinds(run) -> list[str]:
    return [e.kind for e in run.events]


def test_stops_after_turn_one_when_sufficient():
    run = execute("sema", MC, llm=scripted(sufficient_at=1), retriever=ListRetriever(make_hits(30)))

    assert run.status == "ok" and run.answer.choice == "B"
    suff = [e.payload for e in run.events if e.kind == "sufficiency"]
    assert [(s.round, s.sufficient, s.follow_up_queries) for s in suff] == [(1, True, [])]
    assert suff[0].new_hits == 16  # the paper's k
    # I-Agent, one E-Agent judgment, A-Agent report and answer selection
    assert (run.totals.calls, run.totals.retrievals) == (4, 1)
    assert kinds(run) == [
        "agent_message",
        "query",
        "retrieval",
        "agent_message",
        "sufficiency",
        "verdict",
        "agent_message",
        "report",
        "agent_message",
        "answer",
    ]
    report = next(e.payload for e in run.events if e.kind == "report")
    assert report.supporting[0].startswith("B is first line [teaching-") and report.refuting == ["A is not"]
    assert run.answer.cited and run.answer.cited[0].startswith("teaching-")  # teaching-99 is not in the report
    assert "teaching-99" not in run.answer.cited


def test_a_judgment_of_sufficient_evidence_writes_no_follow_ups():
    """The grammar has two shapes: judged sufficient the reply ends; judged short it needs exactly m queries. A small
    model asked for queries either way wrote three it would not need, and the trace showed them under "sufficient"."""
    from pydantic import ValidationError

    from core.engine.llm.request import schema_format
    from core.engine.methods.sema import judgment_schema

    schema = judgment_schema(3)
    sent = schema_format(schema)["json_schema"]["schema"]
    shapes = [sent["$defs"][alt["$ref"].rsplit("/", 1)[1]] for alt in sent["anyOf"]]
    assert sorted(sorted(shape["properties"]) for shape in shapes) == [
        ["follow_up_queries", "gaps", "sufficient"],
        ["gaps", "sufficient"],
    ]
    assert schema.model_validate({"gaps": [], "sufficient": True}).root.sufficient is True
    with pytest.raises(ValidationError):
        schema.model_validate({"gaps": ["x"], "sufficient": False})  # short evidence names its follow-ups
    run = execute("sema", MC, llm=scripted(sufficient_at=1), retriever=ListRetriever(make_hits(30)))
    [explorer] = [e.payload.data for e in run.events if e.agent == "E-Agent" and e.kind == "agent_message"]
    assert explorer == {"gaps": [], "sufficient": True}


def test_runs_to_t_max_when_never_sufficient_with_concurrent_follow_ups():
    llm = scripted(sufficient_at=None)
    follow_ups = threading.Barrier(3, timeout=patience())  # passed only by three retrievals at the same moment
    retriever = ListRetriever(make_hits(60), hold=lambda query: len(retriever.queries) > 1 and follow_ups.wait())
    run = execute("sema", MC, llm=llm, retriever=retriever)

    assert run.status == "ok"
    suff = [e.payload for e in run.events if e.kind == "sufficiency"]
    assert [(s.round, s.sufficient, len(s.follow_up_queries)) for s in suff] == [(1, False, 3), (2, False, 0)]
    assert suff[0].gaps == ["dose of the drug"] and suff[1].new_hits > 0
    assert (run.totals.calls, run.totals.retrievals) == (5, 4)  # the paper's 4.8 calls / 3.4 retrievals, upper case
    follow_ups = [e.payload for e in run.events if e.kind == "query" and e.payload.purpose != "initial"]
    assert [q.round for q in follow_ups] == [2, 2, 2] and "dose of the drug" in follow_ups[0].purpose
    # the last turn is judged without room for follow-ups
    last = [c for c in llm.calls if LAST in c["messages"][1]["content"]]
    assert len(last) == 1 and "follow_up_queries" not in last[0]["schema"].model_fields
    # one initial retrieval, then three that met at the barrier: concurrent
    assert len(retriever.queries) == 4
    # agents run at the paper's temperatures: I and E 1.0, A 0.0
    assert [c["temperature"] for c in llm.calls] == [1.0, 1.0, 1.0, 0.0, 0.0]


def test_t_max_bounds_the_loop():
    run = execute("sema", MC, {"t_max": 3}, llm=scripted(sufficient_at=None), retriever=ListRetriever(make_hits(80)))
    assert [e.payload.round for e in run.events if e.kind == "sufficiency"] == [1, 2, 3]
    assert (run.totals.calls, run.totals.retrievals) == (6, 7)


def test_stops_at_turn_two_when_the_follow_ups_suffice():
    run = execute("sema", MC, {"t_max": 4}, llm=scripted(sufficient_at=2), retriever=ListRetriever(make_hits(80)))
    assert [e.payload.sufficient for e in run.events if e.kind == "sufficiency"] == [False, True]
    assert run.totals.retrievals == 4


def test_without_i_agent_retrieves_with_the_question():
    llm = scripted(sufficient_at=1)
    retriever = ListRetriever(make_hits(30))
    run = execute("sema", MC, {"use_i_agent": False}, llm=llm, retriever=retriever)
    assert run.status == "ok" and retriever.queries == [MC.text]
    assert not any("You are the I-Agent" in c["messages"][1]["content"] for c in llm.calls)
    assert run.totals.calls == 3


def test_without_e_agent_retrieves_once_and_never_judges():
    run = execute(
        "sema", MC, {"use_e_agent": False}, llm=scripted(sufficient_at=None), retriever=ListRetriever(make_hits(30))
    )
    assert run.status == "ok" and "sufficiency" not in kinds(run)
    assert (run.totals.calls, run.totals.retrievals) == (3, 1)


def test_without_a_agent_answers_from_the_evidence_without_a_report():
    llm = scripted(sufficient_at=1).on(
        "Answer the question from the evidence",
        {"reasoning": "r", "answer": "A", "cited_ids": ["teaching-1", "nowhere"]},
    )
    run = execute("sema", MC, {"use_a_agent": False}, llm=llm, retriever=ListRetriever(make_hits(30)))
    assert run.status == "ok" and run.answer.choice == "A" and run.answer.cited == ["teaching-1"]
    assert "report" not in kinds(run) and "verdict" not in kinds(run)
    assert run.totals.calls == 3


def test_arbiter_drops_duplicate_passages_and_reports_what_it_read():
    twin = Hit(
        snippet_id="other-0", corpus="other", title="Doc 0", text="Fact number 0 about disease 0!", rank=1, score=1
    )
    run = execute("sema", MC, llm=scripted(sufficient_at=1), retriever=ListRetriever(make_hits(10) + [twin]))
    verdict = next(e.payload for e in run.events if e.kind == "verdict")
    dropped = {i.doc_id: i.reason for i in verdict.items if not i.keep}
    assert dropped == {"other-0": "duplicate of teaching-0"}
    assert "10 unique of 11" in verdict.reason


def test_unparseable_judgment_ends_in_an_error_event_with_the_trace_kept():
    store = RunStore()
    llm = ScriptedLLM().on("You are the I-Agent", SCHEMA).on("You are the E-Agent", '{"gaps": ["cut off')
    run = execute("sema", MC, llm=llm, retriever=ListRetriever(make_hits(30)), store=store)

    assert run.status == "error"
    saved = store.load_run(run.id)
    # the E-Agent's unusable reply is kept (text and the cost of both attempts), then the error
    assert kinds(saved) == ["agent_message", "query", "retrieval", "agent_message", "error"]
    assert saved.events[-2].payload.text == '{"gaps": ["cut off' and saved.events[-2].usage.calls == 2
    assert saved.events[-1].payload.error_type == "LLMParseError"
    assert "could not be parsed" in saved.events[-1].payload.message


def test_open_question():
    llm = (
        ScriptedLLM()
        .on("You are the I-Agent", SCHEMA)
        .on("You are the E-Agent", judged(True))
        .on("You are the A-Agent. Weigh", report_citing_first_document)
        .on("Based on the evidence report", {"reasoning": "r", "answer": "Metformin.", "cited_ids": []})
    )
    run = execute(
        "sema", Question(text="First-line drug for type 2 diabetes?"), llm=llm, retriever=ListRetriever(make_hits(30))
    )
    assert run.status == "ok" and run.answer.text == "Metformin." and run.answer.choice is None


def test_the_report_schema_bounds_ids_per_claim_for_the_grammar_only():
    from core.engine.methods.sema import MAX_IDS_PER_CLAIM, report_schema

    schema = report_schema(["d1", "d2"])
    ids = schema.model_json_schema()["$defs"]["Claim"]["properties"]["ids"]
    assert ids["maxItems"] == MAX_IDS_PER_CLAIM and ids["items"]["enum"] == ["d1", "d2"]
    # a longer list from a backend that ignores the grammar still parses
    long = schema.model_validate(
        {"supporting": [{"claim": "c", "ids": ["d1", "d2"] * 3}], "refuting": [], "conflicts": [], "summary": "s"}
    )
    assert len(long.supporting[0].ids) == 6


def test_sampled_agents_carry_the_runs_seed_so_the_cache_replays_a_run_and_another_seed_samples_anew(tmp_path):
    llm = scripted(sufficient_at=2, cache=ResponseCache(tmp_path / "cache.sqlite"))
    first = execute("sema", MC, {"seed": 3}, llm=llm, retriever=ListRetriever(make_hits(30)))
    seeds = {c["messages"][1]["content"].split(".")[0]: (c["temperature"], c["seed"]) for c in llm.calls}
    assert set(seeds.values()) == {(1.0, 3000), (0.0, None)}  # the I- and E-Agent sample; the A-Agent is greedy
    sent = len(llm.calls)
    llm.rules[0] = ("You are the I-Agent", {**SCHEMA, "initial_query": "another sample"})  # shows if asked again

    again = execute("sema", MC, {"seed": 3}, llm=llm, retriever=ListRetriever(make_hits(30)))
    assert len(llm.calls) == sent == 5  # the I-Agent, two E-Agent turns, the report and the answer: none asked again
    assert all(e.usage.cached for e in again.events if e.kind == "agent_message")
    assert [e.payload.text for e in again.events if e.kind == "agent_message"] == [
        e.payload.text for e in first.events if e.kind == "agent_message"
    ]

    other = execute("sema", MC, {"seed": 4}, llm=llm, retriever=ListRetriever(make_hits(30)))
    assert other.status == "ok" and len(llm.calls) > sent
    assert "another sample" in next(e.payload.text for e in other.events if e.kind == "agent_message")
