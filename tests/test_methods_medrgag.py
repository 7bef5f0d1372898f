"""MedRGAG control flow with a scripted model: source-balanced retrieval, KGCC's gap-driven generated
documents, KADS's selection from the candidate pool only, ablations, failures."""

from __future__ import annotations

import re

import pytest

from core.question import Question
from core.runner import execute
from core.teaching import load_cases
from tests.fakes import ListRetriever, ScriptedLLM, make_hits

MC = Question(text="Which drug is first line for disease 1?", options={"A": "aspirin", "B": "metformin"})
GAPS = ["dose of the first-line drug", "mechanism of the first-line drug"]
FROM_QUESTION = "(none: written from the question alone)"


class RecordingRetriever(ListRetriever):
    def __init__(self, hits):
        super().__init__(hits)
        self.calls = []

    def search(self, query, k, *, corpora=None, balanced=False, exclude=frozenset()):
        self.calls.append({"k": k, "balanced": balanced})
        return super().search(query, k, corpora=corpora, balanced=balanced, exclude=exclude)


def two_corpora() -> RecordingRetriever:
    return RecordingRetriever(make_hits(8, "textbook") + make_hits(8, "wiki"))


def ids_in(text: str) -> list[str]:
    return re.findall(r"^\[([^\]]+)\]", text, flags=re.MULTILINE)


def summary(messages):
    doc_id = ids_in(messages[1]["content"])[0]
    useless = doc_id.endswith("-0")
    return {"doc_id": doc_id, "useful": not useless, "summary": "" if useless else f"{doc_id} names a drug."}


def background(messages):
    gap = re.search(r"needed for the question: (.*?)\. Write", messages[1]["content"])
    return f"Background on {gap.group(1) if gap else 'the question'}."


def integrate(select: list[str] | None = None, outside_first: bool = False):
    """An integrator that maps every candidate and selects gen-1, the first retrieved document and gen-2."""
    tries = []

    def reply(messages):
        ids = ids_in(messages[1]["content"])
        tries.append(ids)
        chosen = select or ["gen-1", ids[0], "gen-2"]
        if outside_first and len(tries) == 1:
            chosen = ["textbook-99"]  # not a candidate: the schema refuses it and the repair is asked for
        return {"requirements": ["first-line drug", "its dose"],
                "mapping": [{"doc_id": i, "covers": "first-line drug" if i in chosen else "none"} for i in ids],
                "selected": chosen}
    reply.tries = tries
    return reply


def scripted(integrator=None, missing: list[str] = GAPS) -> ScriptedLLM:
    return (ScriptedLLM()
            .on("Retrieved document:", summary)
            .on("Identify the most important knowledge that is missing", {"missing": missing})
            .on("short, accurate background document", background)
            .on("Select the most useful documents", integrator or integrate())
            .on("the ids of the documents you used",
                lambda m: {"reasoning": "per the documents", "answer": "B",
                           "cited_ids": ["gen-1", "textbook-99", "wiki-7"] + ids_in(m[1]["content"])[1:2]}))


def events(run, kind):
    return [e for e in run.events if e.kind == kind]


def test_full_flow_keeps_generated_and_retrieved_apart_and_answers_from_the_selection_only():
    llm, retriever = scripted(), two_corpora()
    run = execute("medrgag", MC, llm=llm, retriever=retriever)

    assert run.status == "ok" and run.answer.choice == "B"
    assert retriever.calls == [{"k": 10, "balanced": True}]  # 5 per corpus, two corpora
    retrieved = events(run, "retrieval")[-1].payload.hits
    assert len(retrieved) == 5 and [h.rank for h in retrieved] == [1, 2, 3, 4, 5]
    assert len(events(run, "retrieval")[0].payload.hits) == 10

    # KGCC: a summary per document; the explorer reads the useful ones; one document per gap it names, no filler
    summaries = [e for e in run.events if e.agent == "Summarizer"]
    assert sorted(e.payload.data["doc_id"] for e in summaries) == sorted(h.snippet_id for h in retrieved)
    explorer_prompt = next(c for c in llm.calls if "Identify the most important" in c["messages"][1]["content"])
    useless = [e.payload.data["doc_id"] for e in summaries if not e.payload.data["useful"]]
    assert all(f"[{i}]" not in explorer_prompt["messages"][1]["content"] for i in useless)
    generated = [e.payload for e in events(run, "generated_doc")]
    assert [g.doc_id for g in generated] == ["gen-1", "gen-2"]
    assert [g.gap for g in generated] == GAPS
    assert generated[0].text == f"Background on {GAPS[0]}."
    assert all(c["temperature"] == 0.0 for c in llm.calls if "background document" in c["messages"][1]["content"])
    assert not {g.doc_id for g in generated} & {h.snippet_id for h in retrieved}

    # KADS: one verdict item per candidate, each marked retrieved or generated and selected or not
    verdict = events(run, "verdict")[0].payload
    assert len(verdict.items) == 7
    kept = [i.doc_id for i in verdict.items if i.keep]
    assert kept == [retrieved[0].snippet_id, "gen-1", "gen-2"]
    assert all(i.reason.startswith("generated" if i.doc_id.startswith("gen-") else "retrieved from ")
               for i in verdict.items)
    assert all(i.reason.endswith("not selected") != i.keep for i in verdict.items)
    assert verdict.reason.startswith("selected 1 retrieved + 2 generated of 7 candidates")

    reader = llm.calls[-1]["messages"][1]["content"]
    assert ids_in(reader) == kept
    assert set(run.answer.cited) <= set(kept) and "gen-1" in run.answer.cited
    assert run.answer.note == "selected 1 retrieved + 2 generated of 7 candidates"
    # 5 summaries, explorer, 2 generated documents, integrator, reader
    assert (run.totals.calls, run.totals.retrievals) == (10, 1)


def test_no_missing_knowledge_means_one_sampled_document_from_the_question():
    llm = scripted(integrate(select=["gen-1"]), missing=[])
    run = execute("medrgag", MC, llm=llm, retriever=two_corpora())

    assert run.status == "ok"
    assert [(e.payload.doc_id, e.payload.gap) for e in events(run, "generated_doc")] == [("gen-1", FROM_QUESTION)]
    writes = [c for c in llm.calls if "background document" in c["messages"][1]["content"]]
    assert len(writes) == 1 and writes[0]["temperature"] == 0.7
    assert len(events(run, "verdict")[0].payload.items) == 6


def test_selection_outside_the_candidate_pool_is_refused():
    integrator = integrate(outside_first=True)
    run = execute("medrgag", MC, llm=scripted(integrator), retriever=two_corpora())

    assert run.status == "ok" and len(integrator.tries) == 2  # the refused reply and its repair
    assert "textbook-99" not in [i.doc_id for i in events(run, "verdict")[0].payload.items if i.keep]
    assert "textbook-99" not in run.answer.cited


def test_without_kgcc_every_document_is_written_from_the_question():
    llm = scripted()
    run = execute("medrgag", MC, {"kgcc": False, "n_generated": 3}, llm=llm, retriever=two_corpora())

    assert run.status == "ok"
    assert not any(e.agent in ("Summarizer", "Explorer") for e in run.events)
    assert [(g.payload.doc_id, g.payload.gap, g.stage) for g in events(run, "generated_doc")] == \
        [(f"gen-{i}", FROM_QUESTION, "generation") for i in (1, 2, 3)]
    # written from one prompt, so sampled: at temperature 0 they would repeat each other
    assert [c["temperature"] for c in llm.calls if "background document" in c["messages"][1]["content"]] == [0.7] * 3


def test_without_kads_the_top_candidates_by_bm25_reach_the_reader():
    llm = scripted()
    run = execute("medrgag", MC, {"kads": False, "n_selected": 4}, llm=llm, retriever=two_corpora())

    assert run.status == "ok" and not any(e.agent == "Integrator" for e in run.events)
    verdict = events(run, "verdict")[0]
    assert verdict.agent == "BM25" and sum(i.keep for i in verdict.payload.items) == 4
    assert all("BM25 rank" in i.reason for i in verdict.payload.items)
    assert ids_in(llm.calls[-1]["messages"][1]["content"]) == [i.doc_id for i in verdict.payload.items if i.keep]


def test_without_generation_only_retrieved_documents_are_candidates():
    run = execute("medrgag", MC, {"n_generated": 0}, llm=scripted(integrate(select=["textbook-1"])),
                  retriever=two_corpora())

    assert run.status == "ok" and not events(run, "generated_doc")
    assert len(events(run, "verdict")[0].payload.items) == 5 and run.answer.cited == []


def test_a_reply_that_never_parses_ends_in_an_error_event_with_the_trace_kept():
    llm = scripted(integrator=lambda m: "the first two look fine")
    run = execute("medrgag", MC, llm=llm, retriever=two_corpora())

    assert run.status == "error" and run.events[-1].kind == "error"
    assert len(events(run, "generated_doc")) == 2  # everything before the failure is kept


@pytest.mark.model
def test_smoke_on_the_embedded_model(embedded_llm):
    from core.retrieval import open_retriever  # open_retriever(): the default corpus, HPO and the teaching pack

    case = next(c for c in load_cases() if c.id == "warfarin")
    params = {"per_source_k": 2, "n_retrieved": 3, "n_generated": 2, "n_selected": 3, "max_doc_chars": 300,
              "generate_tokens": 64}
    run = execute("medrgag", case.to_question(), params, llm=embedded_llm, retriever=open_retriever())

    assert run.status == "ok", run.events[-1].payload
    assert run.answer.choice in case.options
    generated = [e.payload.doc_id for e in events(run, "generated_doc")]
    assert generated in (["gen-1"], ["gen-1", "gen-2"])  # one per missing point the explorer named (at most 2)
    verdict = events(run, "verdict")[0].payload
    retrieved = {h.snippet_id for h in events(run, "retrieval")[-1].payload.hits}
    assert {i.doc_id for i in verdict.items} <= retrieved | set(generated) and len(retrieved) == 3
    selected = {i.doc_id for i in verdict.items if i.keep}
    assert 1 <= len(selected) <= 3 and set(run.answer.cited) <= selected
