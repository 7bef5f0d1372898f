"""What-if re-runs through the run context: a dropped snippet never comes back, a pinned one always does, the new
run names its parent and says what it changed, and the difference between the two runs is spelled out."""

from __future__ import annotations

import pytest

from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from core.studio.runfiles import Variation, export_runs, provenance
from core.studio.workshop.whatif import rerun, retrieved_ids, what_changed
from tests.fakes import ListRetriever, ScriptedLLM, make_hits

MC = Question(text="Which drug treats disease 1?", options={"A": "aspirin", "B": "metformin"})


def reader(answer: str, cited: list[str]) -> dict:
    return {"reasoning": "From the documents.", "answer": answer, "cited_ids": cited}


def test_drop_a_snippet_and_the_answer_changes(tmp_path):
    store = RunStore(tmp_path / "s.sqlite")
    retriever = ListRetriever(make_hits(6))
    parent = execute(
        "medrag", MC, {"k": 3}, llm=ScriptedLLM().enqueue(reader("B", ["teaching-1"])), retriever=retriever, store=store
    )
    assert "teaching-1" in retrieved_ids(parent)
    llm = ScriptedLLM().enqueue(reader("A", ["teaching-3"]))
    child = rerun(parent, Variation(drop=["teaching-1"]), llm=llm, retriever=retriever, store=store, case_id="demo")
    assert child.parent_id == parent.id and child.params == parent.params and child.status == "ok"
    assert "teaching-1" not in retrieved_ids(child) and "teaching-1" not in llm.calls[0]["messages"][1]["content"]
    saved = store.load_run(child.id)
    assert saved.parent_id == parent.id
    entry = export_runs(store, [child.id]).runs[0]
    assert entry.variation == Variation(drop=["teaching-1"]) and entry.case_id == "demo"
    assert entry.backend == "scripted @ http://scripted.invalid/v1" and provenance.lookup(store, parent.id) is None

    diff = what_changed(parent, child)
    assert diff.answer_changed and diff.read_only_before == ["teaching-1"]
    assert diff.cited_before == ["teaching-1"] and diff.cited_after == ["teaching-3"]
    lines = diff.lines()
    assert lines[0] == "Answer changed: B. metformin → A. aspirin"
    assert lines[1].startswith("Snippets retrieved only before: teaching-1; only after: teaching-")


def test_pin_a_snippet_it_is_read_first_and_marked():
    retriever = ListRetriever(make_hits(6))
    parent = execute("medrag", MC, {"k": 2}, llm=ScriptedLLM().enqueue(reader("B", [])), retriever=retriever)
    assert "teaching-5" not in retrieved_ids(parent)
    llm = ScriptedLLM().enqueue(reader("B", ["teaching-5"]))
    child = rerun(parent, Variation(pin=["teaching-5"]), llm=llm, retriever=retriever)
    hits = next(e.payload.hits for e in child.events if e.kind == "retrieval")
    assert hits[0].snippet_id == "teaching-5" and hits[0].pinned and not hits[1].pinned and len(hits) == 2
    assert llm.calls[0]["messages"][1]["content"].index("[teaching-5]") < llm.calls[0]["messages"][1]["content"].index(
        f"[{hits[1].snippet_id}]"
    )
    diff = what_changed(parent, child)
    assert not diff.answer_changed and diff.lines()[0] == "Same answer: B. metformin"
    assert diff.read_only_after == ["teaching-5"]


def test_a_rerun_needs_a_change():
    parent = execute("cot", MC, llm=ScriptedLLM().enqueue({"reasoning": "r", "answer": "A"}))
    with pytest.raises(ValueError, match="needs a snippet to drop or to pin"):
        rerun(parent, Variation(), llm=ScriptedLLM(), retriever=None)


def test_a_rerun_on_a_backend_that_cannot_seed_says_it_is_not_exact():
    import dataclasses

    from tests.test_methods_sema import MC as SEMA_MC
    from tests.test_methods_sema import scripted

    retriever = ListRetriever(make_hits(30))
    gemini = scripted(sufficient_at=1)
    gemini.endpoint = dataclasses.replace(gemini.endpoint, provider="gemini")  # its OpenAI layer refuses seed
    parent = execute("sema", SEMA_MC, {"seed": 3}, llm=gemini, retriever=retriever)
    sampled = [e.payload for e in parent.events if e.kind == "agent_message" and e.agent in ("I-Agent", "E-Agent")]
    assert sampled and all(m.unseeded for m in sampled) and all("seed" not in c["params"] for c in gemini.calls)
    assert "cannot be repeated exactly" in sampled[0].notes[0]
    child = rerun(parent, Variation(drop=[retrieved_ids(parent)[0]]), llm=gemini, retriever=retriever)
    diff = what_changed(parent, child)
    asked = [e for e in child.events if e.kind == "agent_message" and e.agent in ("I-Agent", "E-Agent")]
    assert not diff.exact and diff.unseeded == len(asked) >= 2
    assert diff.lines()[-1].startswith(f"Not an exact re-run: {len(asked)} sampled calls could not be seeded")

    seeded = scripted(sufficient_at=1)  # a backend that takes the seed: the same re-run is exact
    parent = execute("sema", SEMA_MC, {"seed": 3}, llm=seeded, retriever=retriever)
    child = rerun(parent, Variation(drop=[retrieved_ids(parent)[0]]), llm=seeded, retriever=retriever)
    assert what_changed(parent, child).exact and not any(
        "Not an exact" in line for line in what_changed(parent, child).lines()
    )
