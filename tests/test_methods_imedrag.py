"""i-MedRAG control flow with a scripted model: rounds × queries, a history that grows, concurrent lookups."""

from __future__ import annotations

import itertools

from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from tests.fakes import ListRetriever, ScriptedLLM, make_hits, together

MC = Question(text="Which drug is first line for disease 1?", options={"A": "aspirin", "B": "metformin"})
QUERY_PROMPT = "write 3 concise"  # what only the query-writing prompt says (queries=3)


def scripted(queries: int = 3, lookups_together: int = 1) -> ScriptedLLM:
    """Questioner writes numbered queries; each lookup answers citing the first document it was shown, once
    ``lookups_together`` lookups are in flight at the same moment."""
    counter = itertools.count(1)

    def write_queries(_messages):
        return {"analysis": "need more", "queries": [f"query {next(counter)} about disease 1" for _ in range(queries)]}

    def answer_lookup(messages):
        first_id = messages[1]["content"].split("[", 1)[1].split("]", 1)[0]
        return f"Fact found [{first_id}] [not-shown]."

    return (
        ScriptedLLM()
        .on(f"write {queries} concise", write_queries)
        .on("give the id of the document it comes from", together(lookups_together)(answer_lookup))
        .on("ids of the documents that support it", cite_history_and_more)
    )


def cite_history_and_more(messages):
    """The final answer cites one id from the history, plus one from nowhere and one lookups refused to cite."""
    history_id = messages[1]["content"].split("Fact found [", 1)[1].split("]", 1)[0]
    return {"reasoning": "history says B", "answer": "B", "cited_ids": [history_id, "teaching-39", "not-shown"]}


def test_history_grows_round_by_round_and_holds_answers_not_documents():
    llm = scripted()
    run = execute("imedrag", MC, llm=llm, retriever=ListRetriever(make_hits(40)))

    assert run.status == "ok" and run.answer.choice == "B"
    query_prompts = [c["messages"][1]["content"] for c in llm.calls if QUERY_PROMPT in c["messages"][1]["content"]]
    assert len(query_prompts) == 4  # the authors' 4 rounds
    assert "(no follow-up queries asked yet)" in query_prompts[0]
    assert [p.count("Query: ") for p in query_prompts] == [0, 3, 6, 9]
    final = llm.calls[-1]["messages"][1]["content"]
    assert final.count("Query: ") == 12 and final.count("Answer: Fact found") == 12
    assert "fact number" not in final  # documents never enter the history
    # 4 query-writing calls + 12 lookups + the final answer; one retrieval per follow-up query
    assert (run.totals.calls, run.totals.retrievals) == (17, 12)
    queries = [e.payload for e in run.events if e.kind == "query"]
    assert [q.round for q in queries] == [1] * 3 + [2] * 3 + [3] * 3 + [4] * 3
    retrievals = [e.payload for e in run.events if e.kind == "retrieval"]
    assert all(len(r.hits) == 32 for r in retrievals)
    # the answer may cite only documents that a lookup answer cited (and lookups only documents they were shown)
    assert len(run.answer.cited) == 1 and f"[{run.answer.cited[0]}]" in final


def test_rounds_and_queries_are_ablation_switches():
    llm = scripted(queries=1)
    run = execute("imedrag", MC, {"rounds": 2, "queries": 1}, llm=llm, retriever=ListRetriever(make_hits(10)))
    assert run.status == "ok"
    assert (run.totals.calls, run.totals.retrievals) == (2 + 2 + 1, 2)


def test_queries_of_one_round_run_concurrently():
    llm = scripted(lookups_together=3)
    run = execute("imedrag", MC, {"rounds": 1}, llm=llm, retriever=ListRetriever(make_hits(10)))

    # queries, then one round of 3 lookups, each answered only once all three were in flight, then the answer
    assert run.status == "ok" and run.totals.calls == 5
    assert llm.max_active == 3


def test_unparseable_queries_end_in_an_error_event_after_earlier_rounds_are_kept():
    store = RunStore()
    calls = itertools.count()

    def queries_then_garbage(_messages):
        return {"analysis": "a", "queries": ["q1", "q2", "q3"]} if next(calls) == 0 else "no idea"

    llm = (
        ScriptedLLM().on(QUERY_PROMPT, queries_then_garbage).on("give the id of the document it comes from", "A fact.")
    )
    run = execute("imedrag", MC, llm=llm, retriever=ListRetriever(make_hits(10)), store=store)

    assert run.status == "error"
    kinds = [e.kind for e in store.load_run(run.id).events]
    assert kinds[-1] == "error" and "answer" not in kinds
    assert kinds.count("retrieval") == 3 and kinds.count("query") == 3  # round 1 survives in the trace
    assert run.events[-1].payload.error_type == "LLMParseError"


def test_open_question_gets_a_text_answer():
    llm = (
        ScriptedLLM()
        .on(QUERY_PROMPT, {"analysis": "a", "queries": ["q1", "q2", "q3"]})
        .on("give the id of the document it comes from", "A fact.")
        .on("ids of the documents that support it", {"reasoning": "r", "answer": "Metformin.", "cited_ids": []})
    )
    run = execute(
        "imedrag",
        Question(text="First-line drug for type 2 diabetes?"),
        {"rounds": 1},
        llm=llm,
        retriever=ListRetriever(make_hits(5)),
    )
    assert run.status == "ok" and run.answer.text == "Metformin." and run.answer.choice is None
