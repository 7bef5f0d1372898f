"""Which snippet carried the answer (the workshop's reveal), named from a recorded run alone, with no model."""

from __future__ import annotations

from core.engine.trace import Answer, Event, Hit, Retrieval, Run
from core.studio.workshop.carrier import Carrier, carriers
from core.studio.workshop.pack import PACK_DIR, load_pack


def test_the_carrier_is_the_document_the_answers_sentences_rest_on_most():
    case = next(c for c in load_pack(PACK_DIR)[0] if c.case.id == "stemi")
    assert carriers(case.runs["cot"].run) == []  # no document used, none carried it
    found = carriers(case.runs["discuss"].run)
    assert found and all(c.how == "linked" and c.claims for c in found)
    assert [c.weight for c in found] == sorted((c.weight for c in found), reverse=True)


def test_with_no_support_found_the_answers_citations_stand_in():
    run = Run(method="medrag", question="Which drug lowers fever in a child?", status="ok")
    weather = Hit(
        snippet_id="w1", corpus="c", title="Weather", text="Rain fell on Paris all week long.", rank=1, score=1
    )
    answer = Answer(text="Paracetamol by weight, every six hours.", cited=["w1", "gone"])  # "gone": never retrieved
    payloads = [Retrieval(query=run.question, hits=[weather]), answer]
    run.events = [Event(run_id=run.id, seq=i, stage="s", agent="Reader", payload=p) for i, p in enumerate(payloads)]
    run.answer = answer
    assert carriers(run) == [Carrier("w1", "Weather", "cited")]
