"""The claims block and the cards it lights, drawn by the shared trace view: the HTML that makes a click on a claim
light its span (and a click on a card's tag light its claims) without a rerun. The map is built by hand here (the
linker has its own tests, and the browser test clicks the real thing)."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from core.studio.evidence import Claim, Document, EvidenceMap, SupportLink
from tests.ui.runs.test_ui_trace_view import full_run
from ui.common import keys

SPAN = "Inferior ST elevation (II, III, aVF) usually means right coronary artery occlusion."


def hand_map(run) -> EvidenceMap:
    hits = {h.snippet_id: h for e in run.events if e.kind == "retrieval" for h in e.payload.hits}
    claim = Claim("c9-rationale-0", "Inferior leads map to the RCA.", "rationale", "rationale", "Answer", 9, 0, 30)
    documents = {
        i: Document(i, h.text, h.title, "retrieved", h.corpus, cited=i == "teach-0") for i, h in hits.items()
    } | {"gen-1": Document("gen-1", "Coronary dominance varies.", "", "generated", cited=True)}
    links = [SupportLink(claim.id, "teach-0", (0, len(SPAN)), "supported", "shares “inferior”", "retrieved", 0.8)]
    return EvidenceMap(run.id, run.method, "1", [claim], documents, links)


@pytest.fixture
def linked(monkeypatch):
    monkeypatch.setattr("ui.runs.evidence_view.link_run", hand_map)


def render(run, shown: bool) -> AppTest:
    def script():
        import streamlit as st

        from ui.runs.trace_view import render_run

        render_run(st.session_state["run"], key="t")

    at = AppTest.from_function(script, default_timeout=20)
    at.session_state["run"] = run
    at.session_state[keys.evidence_on("t")] = shown
    return at.run()


def html(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_claims_and_cards_share_the_classes_a_click_lights(linked):
    at = render(full_run(), shown=True)
    assert not at.exception
    text = html(at)
    label = re.search(r'<label for="(ev[0-9a-f]{10})" class="ev-claim ev-lvl-supported \1 (ev[0-9a-f]{10})"', text)
    assert label, "the claim is a label of its own radio, carrying its supporting document's class"
    claim, doc = label.groups()
    assert '<input type="radio" class="ev-radio" name="' in text and f'id="{claim}">' in text
    # the cited card holds the span marked with the claim's class, the quote shown when it is picked, and its tag
    assert f'<mark class="ev-span {doc} {claim}">{SPAN}</mark>' in text
    assert f'class="ev-quote {claim} {doc}"' in text
    assert f'<label for="{doc}" class="tag ev-doc-pick" title="light the claims">supports 1 claim</label>' in text
    assert f"body:has(#{claim}:checked) mark.{claim}" in text and f"body:has(#{doc}:checked) .ev-claim.{doc}" in text
    # a cited document that supports no claim says so
    assert '<span class="tag ev-none" title="the answer cites it">supports no claim</span>' in text
    assert "Cited but supporting no claim: gen-1" in text
    assert "These links have not been measured" in text or "agree with a person" in text


def test_nothing_is_linked_until_asked(linked):
    at = render(full_run(), shown=False)
    assert not at.exception
    assert at.toggle(key=keys.evidence_on("t")).value is False
    assert "ev-radio" not in html(at) and "ev-span" not in html(at)


def test_a_failed_run_has_no_claims_to_show(linked):
    run = full_run()
    run.status, run.answer = "error", None
    at = render(run, shown=True)
    assert not at.exception
    assert not [t for t in at.toggle if t.key == keys.evidence_on("t")]


def test_a_claim_whose_text_a_bound_stopped_says_it_was_cut():
    """MASS-RAG's Extractor quoted 200 characters of two snippets, its quote field's bound, ending mid-word: the
    claims list says so where each of those claims ends, and of no other (the real linker on the pack's run)."""
    from core.studio.workshop.pack import PACK_DIR, case_path, load_pack

    if not case_path("stemi", PACK_DIR).exists():
        pytest.skip("the workshop pack has no stemi case")
    run = next(c for c in load_pack(PACK_DIR)[0] if c.case.id == "stemi").runs["mass"].run
    at = render(run, shown=True)
    assert not at.exception
    text = html(at)
    claims = text[text.index('class="ev-claims"') : text.index("clear the highlight")].split("<label ")[1:]
    note = '<span class="ev-note">… cut: this text stops mid-sentence at 200 characters'
    cut = [c.split("</span> ", 1)[1].split(" <span")[0] for c in claims if note in c]
    assert [c[-18:] for c in cut] == ["d no reciprocal ST", "myocardial infarct"]
    assert len(claims) > 10
