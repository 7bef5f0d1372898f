"""MedRAG control flow with a scripted model: documents within the budget, citations limited to what was shown."""

from __future__ import annotations

from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from core.engine.trace import Hit
from tests.fakes import ListRetriever, ScriptedLLM, make_hits

MC = Question(text="Which drug is first line for disease 1?", options={"A": "aspirin", "B": "metformin"})


def long_hits(n: int, chars: int) -> list[Hit]:
    return [h.model_copy(update={"text": h.text + " " + "x" * chars}) for h in make_hits(n)]


def test_medrag_shows_documents_within_budget_and_keeps_only_shown_citations():
    retriever = ListRetriever(long_hits(40, 900))
    llm = ScriptedLLM().enqueue(
        {"reasoning": "Doc 0 says so.", "answer": "B", "cited_ids": ["teaching-0", "teaching-39", "made-up"]}
    )
    run = execute("medrag", MC, {"max_doc_chars": 3000}, llm=llm, retriever=retriever)

    assert run.status == "ok"
    retrieval = next(e.payload for e in run.events if e.kind == "retrieval")
    assert len(retrieval.hits) == 32  # the paper's k
    prompt = llm.calls[0]["messages"][1]["content"]
    shown = [h.snippet_id for h in retrieval.hits if f"[{h.snippet_id}]" in prompt]
    assert 2 <= len(shown) <= 4  # ~950-character documents in a 3,000-character budget
    assert prompt.index("Documents:") < prompt.index("Question:")  # shared context first, for the prefix cache
    assert run.answer.choice == "B" and run.answer.text == "metformin"
    assert run.answer.cited == ["teaching-0"]  # teaching-39 was not shown, made-up never existed
    assert [e.kind for e in run.events] == ["retrieval", "agent_message", "answer"]
    assert (run.totals.calls, run.totals.retrievals) == (1, 1)


def test_one_long_snippet_does_not_leave_the_budget_empty():
    short, long_, rest = long_hits(3, 0)
    hits = [short, long_.model_copy(update={"text": "disease " + "y" * 9000}), rest]  # ranked as listed
    llm = ScriptedLLM().enqueue({"reasoning": "r", "answer": "B", "cited_ids": [long_.snippet_id]})
    run = execute("medrag", MC, {"max_doc_chars": 3000}, llm=llm, retriever=ListRetriever(hits))

    prompt = llm.calls[0]["messages"][1]["content"]
    documents = prompt[prompt.index("Documents:") : prompt.index("Question:")]
    assert f"[{short.snippet_id}]" in documents and f"[{long_.snippet_id}]" in documents  # cut to the room left
    assert f"[{rest.snippet_id}]" not in documents and "y…" in documents
    assert 2900 <= len(documents) <= 3100
    assert run.answer.cited == [long_.snippet_id]  # a cut document was shown, so it can be cited


def test_medrag_answers_an_open_question_in_text():
    llm = ScriptedLLM().enqueue({"reasoning": "r", "answer": "Metformin, unless contraindicated.", "cited_ids": []})
    run = execute(
        "medrag", Question(text="First-line drug for type 2 diabetes?"), llm=llm, retriever=ListRetriever(make_hits(5))
    )
    assert run.status == "ok"
    assert run.answer.choice is None and run.answer.text.startswith("Metformin")
    assert "enum" not in str(llm.calls[0]["schema"].model_json_schema()["properties"]["answer"])


def test_medrag_unparseable_reply_ends_in_error_event_and_keeps_the_trace():
    store = RunStore()
    llm = ScriptedLLM().on("Documents:", "I think the answer is probably B")  # no JSON, twice (repair included)
    run = execute("medrag", MC, llm=llm, retriever=ListRetriever(make_hits(5)), store=store)

    assert run.status == "error"
    assert [e.kind for e in run.events] == ["retrieval", "agent_message", "error"]  # the unusable reply is kept
    assert run.events[1].payload.text == "I think the answer is probably B" and run.totals.calls == 2
    assert run.events[-1].payload.error_type == "LLMParseError"
    assert len(llm.calls) == 2  # the reply and its one repair
    saved = store.load_run(run.id)
    assert saved.status == "error" and [e.kind for e in saved.events] == ["retrieval", "agent_message", "error"]


def test_medrag_with_no_documents_still_answers():
    llm = ScriptedLLM().enqueue({"reasoning": "From knowledge.", "answer": "A", "cited_ids": []})
    run = execute("medrag", MC, llm=llm, retriever=ListRetriever([]))
    assert run.status == "ok" and run.answer.choice == "A"
    assert "(no documents were found)" in llm.calls[0]["messages"][1]["content"]


def test_the_query_knob_searches_the_question_alone_or_with_its_options():
    for query, searched in (("question", MC.text), ("question and options", MC.render())):
        retriever = ListRetriever(make_hits(5))
        llm = ScriptedLLM().enqueue({"reasoning": "r", "answer": "A", "cited_ids": []})
        run = execute("medrag", MC, {"query": query}, llm=llm, retriever=retriever)
        assert run.status == "ok" and retriever.queries == [searched]
        assert next(e.payload for e in run.events if e.kind == "retrieval").query == searched
    assert "metformin" in MC.render() and "metformin" not in MC.text
