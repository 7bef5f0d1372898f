"""Annotate's attribution mode over a real store holding recorded runs (the workshop pack's STEMI case): claim ×
snippet pairs judged blind, each label saved at once, agreement computed once two people have labelled."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.engine.store import RunStore
from core.engine.trace import Run
from core.studio.labels import LabelStore
from core.studio.workshop.pack import PACK_DIR, load_pack
from tests.labels.test_annotate_ui import annotate_page


def saved(store: RunStore, run: Run) -> Run:
    store.create_run(run.model_copy(update={"events": [], "status": "running", "answer": None}))
    for event in run.events:
        store.append_event(event)
    store.finish_run(run)
    return run


@pytest.fixture
def stemi() -> dict[str, Run]:
    store = RunStore()
    case = next(c for c in load_pack(PACK_DIR)[0] if c.case.id == "stemi")
    return {m: saved(store, case.runs[m].run) for m in ("sema", "mass")}


def attribution(name: str) -> AppTest:
    at = annotate_page(name)
    at.segmented_control(key="annotate.mode").set_value("attribution").run()
    assert not at.exception
    return at


def radios(at: AppTest):
    return [r for r in at.radio if r.key.startswith("annotate.attr.")]


def test_pairs_are_judged_blind_and_each_label_is_saved_at_once(stemi):
    at = attribution("ann")
    shown = "\n".join(m.value for m in at.markdown)
    assert "Claim 1" in shown and 'class="snip judge"' in shown
    hidden = ("SEMA", "MASS", "sema", "mass", "Summarizer", "A-Agent", "arbiter", "supported", "not found", "tp-stemi-")
    for word in hidden:  # no method, agent, linker verdict or id
        assert word not in shown
    radios(at)[0].set_value("supports").run()
    radios(at)[1].set_value("no").run()
    note = next(
        t for t in at.text_input if t.key.startswith("annotate.attrnote.") and t.key.endswith(radios(at)[1].key[14:])
    )
    note.input("says the dose, not the timing").run()
    labels = LabelStore().attributions()
    assert sorted((label.grade, label.note) for label in labels) == [(0, "says the dose, not the timing"), (2, "")]
    assert {label.annotator for label in labels} == {"ann"}
    assert {label.run_id for label in labels} <= {run.id for run in stemi.values()}
    assert "You have labelled 2 of" in "\n".join(c.value for c in at.caption)
    assert [r.value for r in radios(attribution("ann"))[:3]] == ["supports", "no", None]  # kept across a reload


def test_agreement_uses_the_relevance_modes_statistics(stemi):
    for name, words in (("ann", ["supports", "partly", "no"] * 2), ("bob", ["supports", "no", "no"] * 2)):
        at = attribution(name)
        for i, word in enumerate(words):
            radios(at)[i].set_value(word).run()
    at = attribution("ann")
    at.session_state["annotate.attr.view"] = "Agreement"  # the tab chosen
    at.run()
    kappa = next(d.value for d in at.dataframe if "kappa" in d.value.columns)
    assert list(kappa["annotators"]) == ["ann / bob"]
