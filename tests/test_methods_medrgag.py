"""MedRGAG control flow with a scripted model: the authors' pool (top 32 per corpus, re-scored to 5), KGCC's
points and generated documents (sampled as the authors sample), KADS's anonymous selection re-scored for the
reader, ablations, failures."""

from __future__ import annotations

import re

import pytest

from core.engine.llm.cache import ResponseCache
from core.engine.llm.request import schema_format
from core.engine.question import Question
from core.engine.runner import execute
from core.studio.teaching import load_cases
from tests.fakes import ListRetriever, ScriptedLLM, make_hits

MC = Question(text="Which drug is first line for disease 1?", options={"A": "aspirin", "B": "metformin"})
YES_NO = Question(text="Is metformin first line for disease 1?", options={"A": "yes", "B": "no"})
POINTS = ["dose of the first-line drug", "mechanism of the first-line drug", "contraindications of the drug"]
FROM_QUESTION = "(none: written from the question alone)"
SAMPLED = {"temperature": 1.2, "top_p": 0.9, "presence_penalty": 1.0, "max_tokens": 256}


def sampled_with_own_seeds(writes: list[dict]) -> bool:
    """Every document sampled as the authors sample, each with its own seed (so the cache replays each)."""
    return all({k: v for k, v in c["params"].items() if k != "seed"} == SAMPLED for c in writes) and sorted(
        c["params"]["seed"] for c in writes
    ) == list(range(len(writes)))


class RecordingRetriever(ListRetriever):
    def __init__(self, hits):
        super().__init__(hits)
        self.calls = []
        self.scored = []

    def search(self, query, k, *, corpora=None, balanced=False, exclude=frozenset(), pin=frozenset(), per_corpus=None):
        self.calls.append({"query": query, "k": k, "balanced": balanced, "per_corpus": per_corpus})
        return super().search(query, k, corpora=corpora, balanced=balanced, exclude=exclude, pin=pin)

    def similarity(self, query, texts):
        self.scored.append(texts)
        return [float(len(t)) for t in texts]  # longest first: an order unlike the integrator's


def two_corpora() -> RecordingRetriever:
    return RecordingRetriever(make_hits(8, "textbook") + make_hits(8, "wiki"))


def ids_in(text: str) -> list[str]:
    return re.findall(r"^\[([^\]]+)\]", text, flags=re.MULTILINE)


def summary(messages):
    doc_id = ids_in(messages[1]["content"])[0]
    useless = doc_id.endswith("-0")
    return (
        {"doc_id": doc_id, "useful": False}
        if useless
        else {"doc_id": doc_id, "useful": True, "summary": f"{doc_id} names a drug."}
    )


def background(messages):
    point = re.search(r"Knowledge point: (.*?)\. Write only", messages[1]["content"])
    return f"Background on {point.group(1)}." if point else "Background from the question alone, longer than the rest."


def integrate(select: list[str] | None = None, outside_first: bool = False):
    """An integrator that maps every candidate and selects the sixth (the first generated one), the first and the
    seventh."""
    tries = []

    def reply(messages):
        ids = ids_in(messages[1]["content"])
        tries.append(ids)
        chosen = select or [ids[5], ids[0], ids[6]]
        if outside_first and len(tries) == 1:
            chosen = ["99"]  # not a candidate: the schema refuses it and the repair is asked for
        return {
            "requirements": ["first-line drug", "its dose"],
            "mapping": [{"doc_id": i, "covers": "first-line drug" if i in chosen else "none"} for i in ids],
            "selected": chosen,
        }

    reply.tries = tries
    return reply


def scripted(integrator=None, missing: list[str] = POINTS, cache=None) -> ScriptedLLM:
    return (
        ScriptedLLM(cache=cache)
        .on("Retrieved document:", summary)
        .on("Identify the most important knowledge that is missing", {"missing": missing})
        .on("Write a helpful background document", background)
        .on("Select the most useful documents", integrator or integrate())
        .on(
            "the ids of the documents you used",
            lambda m: {
                "reasoning": "per the documents",
                "answer": "B",
                "cited_ids": ["99", "gen-1"] + ids_in(m[1]["content"])[:2],
            },
        )
    )


def events(run, kind):
    return [e for e in run.events if e.kind == kind]


def calls(llm, text):
    return [c for c in llm.calls if text in c["messages"][1]["content"]]


def test_full_flow_pools_the_authors_retrieval_and_fills_the_generated_documents_to_five():
    llm, retriever = scripted(), two_corpora()
    run = execute("medrgag", MC, llm=llm, retriever=retriever)

    assert run.status == "ok" and run.answer.choice == "B"
    # the pool: the top 32 of every corpus for the question with its options, re-scored to 5
    assert retriever.calls == [
        {
            "query": "Which drug is first line for disease 1?\nA. aspirin\nB. metformin",
            "k": 5,
            "balanced": True,
            "per_corpus": 32,
        }
    ]
    assert "top 32 of each of 2 corpora pooled (64)" in events(run, "query")[0].payload.purpose
    retrieved = events(run, "retrieval")[0].payload.hits
    assert len(retrieved) == 5

    # KGCC: a summary per document; the explorer reads the useful ones and is asked for exactly 3 points
    summaries = [e for e in run.events if e.agent == "Summarizer"]
    assert sorted(e.payload.data["doc_id"] for e in summaries) == sorted(h.snippet_id for h in retrieved)
    explorer = calls(llm, "Identify the most important")
    assert len(explorer) == 1
    assert explorer[0]["schema"].model_json_schema()["properties"]["missing"]["minItems"] == 3
    assert explorer[0]["schema"].model_json_schema()["properties"]["missing"]["maxItems"] == 3
    useless = [e.payload.data["doc_id"] for e in summaries if not e.payload.data["useful"]]
    assert all(f"[{i}]" not in explorer[0]["messages"][1]["content"] for i in useless)
    # a document of no use ends its reply there (the reference's "No useful information"): two shapes in the grammar
    assert useless and [e.payload.data for e in summaries if not e.payload.data["useful"]] == [
        {"doc_id": i, "useful": False} for i in useless
    ]
    sent = schema_format(calls(llm, "Retrieved document:")[0]["schema"])["json_schema"]["schema"]
    assert sorted(sorted(sent["$defs"][alt["$ref"].rsplit("/", 1)[1]]["properties"]) for alt in sent["anyOf"]) == [
        ["doc_id", "summary", "useful"],
        ["doc_id", "useful"],
    ]
    # one document per point, then two from the question alone: five, all sampled as the authors sample
    generated = [e.payload for e in events(run, "generated_doc")]
    assert [g.doc_id for g in generated] == [f"gen-{i}" for i in range(1, 6)]
    assert [g.gap for g in generated] == POINTS + [FROM_QUESTION] * 2
    assert generated[0].text == f"Background on {POINTS[0]}."
    writes = calls(llm, "Write a helpful background document")
    assert len(writes) == 5 and sampled_with_own_seeds(writes)
    # the other agents at the authors' temperature, the reader at 0
    assert {c["temperature"] for c in llm.calls if c not in writes} == {1.2, 0.0}
    assert calls(llm, "the ids of the documents you used")[0]["temperature"] == 0.0

    # KADS: the integrator reads 10 candidates under neutral ids, nothing naming the generated ones
    integrator = calls(llm, "Select the most useful documents")[0]["messages"][1]["content"]
    assert ids_in(integrator) == [str(i) for i in range(1, 11)]
    assert "gen-" not in integrator and "generated" not in integrator.lower()
    assert not any(h.snippet_id in integrator for h in retrieved)
    # the trace keeps provenance: one verdict item per candidate, by its own id, with the id the model saw
    verdict = events(run, "verdict")[0].payload
    assert [i.doc_id for i in verdict.items] == [h.snippet_id for h in retrieved] + [g.doc_id for g in generated]
    assert all(
        i.reason.startswith("generated" if i.doc_id.startswith("gen-") else "retrieved from ") for i in verdict.items
    )
    assert [f"shown to the model as [{n}]" in i.reason for n, i in enumerate(verdict.items, 1)] == [True] * 10
    kept = [i.doc_id for i in verdict.items if i.keep]
    assert kept == [retrieved[0].snippet_id, "gen-1", "gen-2"]
    assert verdict.reason.startswith("selected 1 retrieved + 2 generated of 10 candidates, re-scored")

    # the selection re-scored (longest first here) and read in that order, under the integrator's ids
    first = f"{retrieved[0].title}. {retrieved[0].text}"  # a retrieved document scored with its title
    assert retriever.scored[-1] == [generated[0].text, first, generated[1].text]  # in the integrator's order
    length = {retrieved[0].snippet_id: len(first), "gen-1": len(generated[0].text), "gen-2": len(generated[1].text)}
    longest = sorted(kept, key=lambda i: -length[i])
    reader = calls(llm, "the ids of the documents you used")[0]["messages"][1]["content"]
    shown = {i.doc_id: re.search(r"as \[(\d+)\]", i.reason).group(1) for i in verdict.items}
    assert ids_in(reader) == [shown[i] for i in longest]
    assert "gen-" not in reader and "generated" not in reader.lower()
    assert [
        f"read {r} of 3" in next(i.reason for i in verdict.items if i.doc_id == d) for r, d in enumerate(longest, 1)
    ] == [True] * 3
    # citations come back as the documents' own ids; ids the reader never saw are dropped
    assert run.answer.cited == longest[:2]
    assert run.answer.note == "selected 1 retrieved + 2 generated of 10 candidates"
    # 5 summaries, explorer, 5 generated documents, integrator, reader
    assert (run.totals.calls, run.totals.retrievals) == (13, 1)


def test_a_yes_no_question_gets_two_points_and_three_documents_from_the_question():
    llm = scripted(missing=POINTS[:2])
    run = execute("medrgag", YES_NO, llm=llm, retriever=two_corpora())

    assert run.status == "ok"
    schema = calls(llm, "Identify the most important")[0]["schema"].model_json_schema()["properties"]["missing"]
    assert (schema["minItems"], schema["maxItems"]) == (2, 2)
    assert [e.payload.gap for e in events(run, "generated_doc")] == POINTS[:2] + [FROM_QUESTION] * 3


def test_points_the_explorer_leaves_blank_are_made_up_from_the_question():
    llm = scripted(integrate(select=["6"]), missing=["  ", POINTS[0], ""])
    run = execute("medrgag", MC, llm=llm, retriever=two_corpora())

    assert run.status == "ok"
    assert [e.payload.gap for e in events(run, "generated_doc")] == [POINTS[0]] + [FROM_QUESTION] * 4
    assert len(events(run, "verdict")[0].payload.items) == 10


def test_selection_outside_the_candidate_pool_is_refused():
    integrator = integrate(outside_first=True)
    run = execute("medrgag", MC, llm=scripted(integrator), retriever=two_corpora())

    assert run.status == "ok" and len(integrator.tries) == 2  # the refused reply and its repair
    assert sum(i.keep for i in events(run, "verdict")[0].payload.items) == 3


def test_without_kgcc_every_document_is_written_from_the_question_and_sampled():
    llm = scripted()
    run = execute("medrgag", MC, {"kgcc": False}, llm=llm, retriever=two_corpora())

    assert run.status == "ok"
    assert not any(e.agent in ("Summarizer", "Explorer") for e in run.events)
    assert [(g.payload.doc_id, g.payload.gap, g.stage) for g in events(run, "generated_doc")] == [
        (f"gen-{i}", FROM_QUESTION, "generation") for i in range(1, 6)
    ]
    # written from one prompt, so sampled: at temperature 0 they would repeat each other
    writes = calls(llm, "Write a helpful background document")
    assert len(writes) == 5 and sampled_with_own_seeds(writes)
    assert events(run, "verdict")[0].agent == "Integrator"


def test_without_kads_the_re_scored_top_candidates_reach_the_reader():
    llm, retriever = scripted(), two_corpora()
    run = execute("medrgag", MC, {"kads": False, "n_selected": 4}, llm=llm, retriever=retriever)

    assert run.status == "ok" and not any(e.agent == "Integrator" for e in run.events)
    assert any(e.agent == "Explorer" for e in run.events)  # KGCC still runs
    verdict = events(run, "verdict")[0]
    assert verdict.agent == "Reranker" and sum(i.keep for i in verdict.payload.items) == 4
    assert len(retriever.scored[-1]) == 10  # every candidate re-scored against the question
    order = sorted(verdict.payload.items, key=lambda i: int(re.search(r"re-scored #(\d+)", i.reason).group(1)))
    shown = [re.search(r"as \[(\d+)\]", i.reason).group(1) for i in order[:4]]
    assert ids_in(calls(llm, "the ids of the documents you used")[0]["messages"][1]["content"]) == shown


def test_without_generation_only_retrieved_documents_are_candidates():
    run = execute("medrgag", MC, {"n_generated": 0}, llm=scripted(integrate(select=["1"])), retriever=two_corpora())

    assert run.status == "ok" and not events(run, "generated_doc")
    assert not any(e.agent == "Explorer" for e in run.events)
    assert len(events(run, "verdict")[0].payload.items) == 5


def test_a_reply_that_never_parses_ends_in_an_error_event_with_the_trace_kept():
    llm = scripted(integrator=lambda m: "the first two look fine")
    run = execute("medrgag", MC, llm=llm, retriever=two_corpora())

    assert run.status == "error" and run.events[-1].kind == "error"
    assert len(events(run, "generated_doc")) == 5  # everything before the failure is kept


@pytest.mark.model
def test_smoke_on_the_embedded_model(embedded_llm, least_lengths):
    from core.engine.retrieval import open_retriever  # open_retriever(): the default corpus, HPO and the teaching pack

    case = next(c for c in load_cases() if c.id == "warfarin")
    # The smallest knobs that still run every stage: one retrieved document, one point and one document from the
    # question alone, sampled as the authors sample; the other agents greedy, which keeps their JSON replies short.
    params = {
        "per_source_k": 2,
        "n_retrieved": 1,
        "n_points": 1,
        "n_generated": 2,
        "n_selected": 1,
        "max_doc_chars": 200,
        "generate_tokens": 32,
        "agent_temperature": 0.0,
        "answer_format": "answer only",  # the reasoning is what the reader's time goes to (tests/test_answer_format.py)
    }
    run = execute("medrgag", case.to_question(), params, llm=embedded_llm, retriever=open_retriever())

    assert run.status == "ok", run.events[-1].payload
    assert run.answer.choice in case.options
    generated = [e.payload for e in events(run, "generated_doc")]
    assert [g.doc_id for g in generated] == ["gen-1", "gen-2"]
    assert generated[0].gap != FROM_QUESTION and generated[1].gap == FROM_QUESTION
    retrieved = {h.snippet_id for h in events(run, "retrieval")[0].payload.hits}
    verdict = events(run, "verdict")[0].payload
    assert len(retrieved) == 1 and {i.doc_id for i in verdict.items} == retrieved | {"gen-1", "gen-2"}
    selected = {i.doc_id for i in verdict.items if i.keep}
    assert len(selected) == 1 and set(run.answer.cited) <= selected
    integrator = next(e.payload.data for e in run.events if e.agent == "Integrator")
    assert set(integrator["selected"]) <= {"1", "2", "3"}  # it named candidates by their neutral ids
    summaries = [e.payload.data for e in run.events if e.agent == "Summarizer"]
    assert len(summaries) == 1 and all(("summary" in s) == s["useful"] for s in summaries)  # no use: nothing more


def test_a_saved_run_replays_from_the_response_cache(tmp_path):
    llm = scripted(cache=ResponseCache(tmp_path / "cache.sqlite"))
    first = execute("medrgag", MC, llm=llm, retriever=two_corpora())
    sent = len(llm.calls)
    again = execute("medrgag", MC, llm=llm, retriever=two_corpora())

    assert first.status == again.status == "ok" and len(llm.calls) == sent  # sampled replies included
    assert [g.payload.text for g in events(again, "generated_doc")] == [
        g.payload.text for g in events(first, "generated_doc")
    ]
    execute("medrgag", MC, {"seed": 1}, llm=llm, retriever=two_corpora())
    assert len(calls(llm, "Write a helpful background document")) == 10  # another seed samples anew
