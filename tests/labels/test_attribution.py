"""Attribution labels (claim × snippet: supports / partly / no): the pairs a recorded run offers, kept blind of the
linker; stored beside the relevance labels in the same file; the same agreement statistics."""

from __future__ import annotations

import dataclasses

import pytest

from core.studio.evidence import Claim, Document, link_run
from core.studio.labels import LabelError, LabelStore
from core.studio.labels.agreement import alpha, pairwise
from core.studio.labels.attribution import Pair, judged, pairs_of
from core.studio.workshop.pack import PACK_DIR, load_pack


def attribution_pair() -> list[Pair]:
    claim = Claim("c9-rationale-0", "Give aspirin 300 mg at once.", "rationale", "rationale", "Answer", 9, 0, 28)
    return [
        Pair("run-1", "medrag", claim, Document("tp-stemi-k2", "Aspirin 300 mg is chewed.", "Aspirin", "retrieved"))
    ]


@pytest.fixture(scope="module")
def sema_run():
    case = next(c for c in load_pack(PACK_DIR)[0] if c.case.id == "stemi")
    return case.runs["sema"].run


def test_a_recorded_run_offers_each_claim_with_the_documents_it_cites(sema_run):
    pairs = pairs_of(sema_run)
    assert pairs and len({p.key for p in pairs}) == len(pairs)
    supporting = [p for p in pairs if p.claim.section == "supporting"]
    assert {p.document.id for p in supporting} == {"tp-stemi-k1", "tp-stemi-n2"}  # the arbiter's "[k1, n2]"
    assert {p.document.id for p in pairs if p.claim.section == "conflicts"} == {
        "tp-stemi-k1",
        "tp-stemi-n2",
        "tp-stemi-k5",
    }
    # blind: a pair carries the claim and the document, nothing the linker concluded about them
    linked = {(link.claim_id, link.snippet_id) for link in link_run(sema_run).links}
    assert {f.name for f in dataclasses.fields(Pair)} == {"run_id", "method", "claim", "document"}
    assert {(p.claim.id, p.document.id) for p in pairs} - linked  # pairs the linker found nothing in are asked too


def test_labels_are_kept_per_annotator_with_their_history(tmp_path):
    store = LabelStore(tmp_path / "studio.sqlite")
    [pair] = attribution_pair()
    assert store.set_attribution(pair, "ann", "supports").new == 1
    assert store.set_attribution(pair, "ann", 1, "the dose, not the timing").changed == 1
    assert store.set_attribution(pair, "bob", "no").new == 1
    with pytest.raises(LabelError, match="supports"):
        store.set_attribution(pair, "bob", 3)
    rows = store.attributions()
    assert [(r.annotator, r.grade, r.note, r.claim) for r in rows] == [
        ("ann", 1, "the dose, not the timing", pair.claim.text),
        ("bob", 0, "", pair.claim.text),
    ]
    history = store.history(mode="attribution")
    assert [(h["annotator"], h["old_grade"], h["new_grade"], h["claim_id"]) for h in history] == [
        ("ann", None, 2, "c9-rationale-0"),
        ("ann", 2, 1, "c9-rationale-0"),
        ("bob", None, 0, "c9-rationale-0"),
    ]
    assert store.labels() == [] and store.history() == []  # the relevance labels see none of them


def test_agreement_on_attribution_uses_the_relevance_modes_statistics(tmp_path, sema_run):
    store = LabelStore(tmp_path / "studio.sqlite")
    pairs = pairs_of(sema_run)[:12]
    for i, pair in enumerate(pairs):
        store.set_attribution(pair, "ann", i % 3)
        store.set_attribution(pair, "bob", i % 3 if i % 4 else (i + 1) % 3)
        store.set_attribution(pair, "cy", i % 3)
    found = judged(store.attributions())
    assert len(found) == len(pairs)
    [ann_bob, *_] = pairwise(found)
    assert ann_bob.annotators == ("ann", "bob") and ann_bob.n == len(pairs) and 0 < ann_bob.value < 1
    assert ann_bob.low is not None  # twelve pairs: an interval
    assert alpha(found).value is not None
