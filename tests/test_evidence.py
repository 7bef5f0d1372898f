"""Evidence without the embedder: a run's claims and where they were said, the judge pass on a scripted endpoint,
and citation precision and recall from a map (the linker itself: tests/test_evidence_linker.py)."""

from __future__ import annotations

import pytest

from core.engine.llm.cache import ResponseCache
from core.studio.eval.citations import CitationCounts, citation_columns, citation_counts
from core.studio.eval.report import format_table, summarize
from core.studio.eval.results import ItemResult
from core.studio.evidence import Claim, Document, EvidenceMap, SupportLink, claims_of, judge_map, source_text
from core.studio.evidence.claims import cited_in, sentences
from core.studio.workshop.pack import load_pack
from tests.fakes import ScriptedLLM


@pytest.fixture(scope="module")
def pack():
    return {c.case.id: {m: e.run for m, e in c.runs.items()} for c in load_pack()[0]}


def test_sentences_keep_their_offsets_and_leave_markup_and_scraps_out():
    text = (
        "## Background\n1. **Aspirin** is given at once, e.g. 300 mg. It is chewed. Ok.\nThe dose is 1.5 mg/kg daily."
    )
    found = sentences(text)
    assert [s.text for s in found] == [
        "Aspirin** is given at once, e.g. 300 mg.",
        "The dose is 1.5 mg/kg daily.",
    ]
    assert all(text[s.start : s.end] == s.text for s in found)


def test_cited_ids_are_read_from_brackets():
    assert cited_in("ECG shows it. [tp-stemi-k1, tp-stemi-n2] and [HP:0001658]") == (
        "tp-stemi-k1",
        "tp-stemi-n2",
        "HP:0001658",
    )


def test_every_method_of_the_pack_has_claims_with_offsets_into_its_own_text(pack):
    for case, runs in pack.items():
        for method, run in runs.items():
            claims = claims_of(run)
            assert claims, f"{case}/{method}: no claim"
            assert len({c.id for c in claims}) == len(claims), f"{case}/{method}: claim ids repeat"
            for c in claims:
                assert source_text(run, c)[c.start : c.end] == c.text


def test_agents_findings_are_claims_where_a_method_has_them(pack):
    sections = {m: {c.section for c in claims_of(run)} for m, run in pack["stemi"].items()}
    assert {"supporting", "refuting", "conflicts", "arbiter's summary"} <= sections["sema"]
    assert {"Summarizer's view", "Reasoner's view", "Extractor's quotes"} <= sections["mass"]
    assert any(s.startswith("generated document gen-") for s in sections["medrgag"])
    assert "final summary" in sections["discuss"]
    assert sections["cot"] == {"answer", "rationale"}
    # Discuss-RAG's turns' drafts are not claims: only the summary the retrieval used
    discuss = claims_of(pack["stemi"]["discuss"])
    assert len({c.seq for c in discuss if c.section == "final summary"}) == 1


def test_a_claim_restating_the_case_is_told_apart(pack):
    sema = claims_of(pack["stemi"]["sema"])
    vitals = next(c for c in sema if c.text.startswith("Blood pressure is 138/84"))
    assert vitals.restates_question and vitals.cited == ("tp-stemi-k1", "tp-stemi-n2")
    answer = next(c for c in sema if c.origin == "answer")
    assert not answer.restates_question


# -- a map by hand: the judge pass and the citation figures ----------------------------------------------------------

DOC = "Aspirin is given as soon as STEMI is suspected. Primary PCI is preferred within 120 minutes."


def small_map() -> EvidenceMap:
    claims = [
        Claim("c1-answer-0", "Give aspirin and transfer for primary PCI", "answer", "answer", "Answer", 1, 0, 41),
        Claim(
            "c1-rationale-0", "Troponin must be waited for before any decision", "rationale", "rationale", "A", 1, 0, 47
        ),
    ]
    documents = {
        "k1": Document("k1", DOC, "STEMI", "retrieved", "pack", cited=True),
        "n1": Document(
            "n1", "Pericarditis causes sharp chest pain eased by sitting forward.", "P", "retrieved", cited=True
        ),
    }
    links = [
        SupportLink("c1-answer-0", "k1", (0, 47), "supported", "shares aspirin, pci", "retrieved", 0.8),
        SupportLink("c1-rationale-0", "k1", (48, 93), "not_found", "meaning similarity 0.2", "retrieved", 0.2),
    ]
    return EvidenceMap("r1", "medrag", "1", claims, documents, links)


def judge_llm(cache=None) -> ScriptedLLM:
    llm = ScriptedLLM(cache=cache)
    llm.on("Give aspirin", {"snippet_id": "k1", "level": "supported", "why": "k1 says aspirin at once and PCI"})
    llm.on("Troponin must", {"snippet_id": "", "level": "not_found", "why": "no document says to wait"})
    return llm


def test_the_judge_adds_a_reason_beside_the_offline_one_one_call_per_claim():
    emap = small_map()
    llm = judge_llm()
    judged = judge_map(emap, llm)
    assert len(llm.calls) == len(emap.claims)
    best = judged.links_of("c1-answer-0")[0]
    assert (best.level, best.why) == ("supported", "shares aspirin, pci")  # the offline verdict stands
    assert (best.judge_level, best.judge_why) == ("supported", "k1 says aspirin at once and PCI")
    other = judged.links_of("c1-rationale-0")[0]
    assert (other.level, other.judge_level) == ("not_found", "not_found")
    assert judged.judge.claims == 2 and judged.judge.cost.billed.calls == 2
    assert emap.judge is None and emap.links[0].judge_level is None  # the offline map is left as it was


def test_a_judge_call_that_fails_leaves_the_offline_link_alone():
    llm = ScriptedLLM()
    llm.on("Give aspirin", {"snippet_id": "k1", "level": "partly", "why": "only aspirin"})
    llm.on("Troponin must", "this is not JSON and never will be")
    judged = judge_map(small_map(), llm)
    assert judged.links_of("c1-rationale-0")[0].judge_level is None
    assert judged.links_of("c1-answer-0")[0].judge_level == "partly"
    assert judged.judge.claims == 1


def test_a_second_judge_pass_comes_from_the_cache_and_bills_nothing(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    judge_map(small_map(), judge_llm(cache))
    again = judge_llm(cache)
    judged = judge_map(small_map(), again)
    assert judged.judge.cost.billed.cached_calls == 2 and judged.judge.cost.billed.calls == 0
    assert judged.links_of("c1-answer-0")[0].judge_why == "k1 says aspirin at once and PCI"


def test_citation_counts_follow_alce():
    counts = citation_counts(small_map())
    # two claims; one is supported by a cited snippet; of two cited snippets one supports a claim
    assert counts == CitationCounts(claims=2, supported=1, cited=2, precise=1)
    columns = citation_columns(counts)
    assert columns["citation_recall"] == 0.5 and columns["citation_precision"] == 0.5
    assert columns["citation_recall_low"] < 0.5 < columns["citation_recall_high"]
    assert citation_columns(CitationCounts())["citation_precision"] is None  # nothing cited: no precision


def row(run_id: str, correct: int) -> ItemResult:
    return ItemResult(
        config="c",
        method="medrag",
        dataset="d",
        qid=run_id,
        run_id=run_id,
        model="m",
        params="{}",
        corpus="[]",
        gold="A",
        predicted="A" if correct else "B",
        correct=correct,
        status="ok",
        error_type="",
        calls=1,
        retrievals=1,
        prompt_tokens=10,
        completion_tokens=5,
        seconds=1.0,
        finished=1.0,
        asked="",
        preset="",
        arm="medrag",
    )


def test_the_benchmark_table_shows_citations_beside_accuracy():
    rows = [row("r1", 1), row("r2", 1)]
    citations = {"r1": CitationCounts(4, 1, 2, 1), "r2": CitationCounts(2, 0, 1, 0)}
    (line,) = summarize(rows, citations)
    assert line["accuracy"] == 1.0 and line["citation_recall"] == round(1 / 6, 4)
    assert line["citation_precision"] == round(1 / 3, 4)
    table = format_table([line])
    assert "citation recall" in table and "17% (" in table
    assert "citation_recall" not in summarize(rows)[0]  # asked for only
