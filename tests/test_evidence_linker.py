"""The offline linker on recorded runs of the workshop pack, with the shipped embedder (no model, no network), and
``python -m core evidence`` printing its claims."""

from __future__ import annotations

import pytest

from core.__main__ import main
from core.studio.evidence import link_run
from core.studio.workshop.pack import load_pack


@pytest.fixture(scope="module")
def stemi():
    case = next(c for c in load_pack()[0] if c.case.id == "stemi")
    return {m: e.run for m, e in case.runs.items()}


def test_a_verbatim_quote_is_supported_by_the_document_it_quotes_at_the_quoted_span(stemi):
    emap = link_run(stemi["mass"])
    quote = next(c for c in emap.claims if c.section == "Extractor's quotes" and "supplemental oxygen" in c.text)
    best = emap.links_of(quote.id)[0]
    assert (best.snippet_id, best.level, best.source) == ("tp-stemi-k4", "supported", "retrieved")
    start, end = best.span
    assert quote.text in emap.documents["tp-stemi-k4"].text[start:end]


def test_restating_the_case_is_never_supported_and_a_cited_snippet_that_supports_nothing_is_named(stemi):
    emap = link_run(stemi["sema"])
    vitals = next(c for c in emap.claims if c.text.startswith("Blood pressure is 138/84"))
    assert vitals.restates_question and emap.level_of(vitals.id) != "supported"
    assert "restates the case" in emap.links_of(vitals.id)[0].why
    # SEMA-RAG's arbiter cites tp-stemi-n2 (aortic dissection) for the vital signs: it supports none of its claims
    assert "tp-stemi-n2" in emap.cited_unsupporting()


def test_generated_documents_are_told_apart_and_never_support_their_own_sentences(stemi):
    emap = link_run(stemi["medrgag"])
    assert {d.source for d in emap.documents.values()} == {"retrieved", "generated"}
    for claim in (c for c in emap.claims if c.generated_doc):
        assert all(ln.snippet_id != claim.generated_doc for ln in emap.links_of(claim.id))
    generated_links = [ln for ln in emap.links if ln.source == "generated"]
    assert generated_links and all(emap.documents[ln.snippet_id].source == "generated" for ln in generated_links)


def test_a_map_is_computed_once_per_run_and_linker_version(stemi):
    assert link_run(stemi["discuss"]) is link_run(stemi["discuss"])


def test_the_command_prints_each_claim_with_its_snippets_spans_and_level(stemi, capsys):
    assert main(["evidence", stemi["sema"].id]) == 0
    out = capsys.readouterr().out
    assert f"run {stemi['sema'].id} · sema" in out
    assert "== supporting (A-Agent)" in out and "== answer (Answer)" in out
    assert "supported by tp-stemi-k1 (retrieved) chars" in out
    assert "cited but supporting no claim: tp-stemi-n2" in out
    # the arbiter lists one conflict twice: shown once, counted; the rationale the reply format cut says so
    conflicts = out.split("== conflicts (A-Agent)")[1].split("\n== ")[0]
    assert conflicts.count("[c7-conflicts-") == 1 and "said 2 times: c7-conflicts-1 repeat it" in conflicts
    rationale = " ".join(out.split("== rationale (Answer)")[1].split())
    assert (
        "[c9-rationale-1] The centre can reo (cites tp-stemi-k1, tp-stemi-n2, tp-stemi-k5; cut: this text stops"
        in rationale
    )
    assert "[c9-rationale-0]" in rationale and "cut:" not in rationale.split("[c9-rationale-1]")[0]


def test_the_command_refuses_an_unknown_run(capsys):
    assert main(["evidence", "no-such-run"]) == 2
    assert "no saved run and no workshop pack run" in capsys.readouterr().err
