"""The Benchmark page's "Check a paper's claim" with a scripted model: the claim and the paper's figures, the
questions needed before anything runs, the check run as a benchmark job, and the verdict with the paper's figure
beside each arm's accuracy."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from core.studio.claims import get_claim, sample_size
from core.studio.eval.job import EvalJob
from tests.fakes import ListRetriever, ScriptedLLM, make_hits
from tests.test_eval import BENCH
from tests.waiting import patience
from ui.common.jobs import runner
from ui.common.keys import LLM_OVERRIDE, RETRIEVER_OVERRIDE


@pytest.fixture(autouse=True)
def no_jobs():
    runner.clear()
    yield
    for job in runner().jobs():
        job.cancel()
        job.until_done(patience())
    runner.clear()


def claim_page(tmp_path, llm, **state) -> AppTest:
    path = tmp_path / "mini.json"
    path.write_text(json.dumps(BENCH))
    at = AppTest.from_string("from ui.benchmark.page import page\npage()", default_timeout=30)
    if llm is not None:
        at.session_state[LLM_OVERRIDE] = llm
    at.session_state[RETRIEVER_OVERRIDE] = ListRetriever(make_hits(4))
    at.session_state["bench.path"] = str(path)
    at.session_state["bench.view"] = "Check a paper's claim"
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_a_claim_is_sized_then_checked_and_judged(tmp_path):
    llm = ScriptedLLM().enqueue(*[{"reasoning": "r", "answer": "A", "cited_ids": []}] * 40)
    at = claim_page(tmp_path, llm, **{"claims.pick": "medrag-vs-cot-sema-table"})
    assert not at.exception and not at.error
    claim = get_claim("medrag-vs-cot-sema-table")
    assert claim.claim in text_of(at)
    needed = sample_size(claim, datasets=["medqa", "pubmedqa"]).needed
    assert at.metric[0].value == f"{needed:,}"
    # the mini benchmark holds 5 of the claim's questions, far fewer than needed: said, and the n offered is 5
    assert any("fewer than the" in w.value for w in at.warning)
    assert at.number_input(key="claims.n.medrag-vs-cot-sema-table.medqa.pubmedqa").value == 5
    assert not llm.calls  # nothing spent before the click

    at.button(key="claims.start").click().run()
    job = runner().latest(EvalJob)
    assert job is not None and job.until_done(patience()) and job.status == "finished"
    at.run()
    assert not at.exception
    verdict = at.info[-1].value
    assert "Not enough questions to tell (n needed: " in verdict  # both arms answered A: no difference
    table = at.dataframe[0].value
    assert list(table["arm"]) == ["cot", "medrag"]
    assert list(table["paper"]) == ["58.0%", "60.9%"]  # deepseek-v3.1: (77.53 + 38.40) / 2, (77.14 + 44.60) / 2
    assert list(table["correct"]) == ["3/5", "3/5"]
    setup = at.table[0].value
    assert list(setup.index) == ["model", "corpus", "k", "retriever"] and (setup["differs"] == "yes").all()
    assert at.button(key="claims.start").disabled and at.button(key="claims.start").label == "All finished"


def test_a_claim_with_no_figure_asks_for_an_effect(tmp_path):
    at = claim_page(tmp_path, ScriptedLLM(), **{"claims.pick": "imedrag-vs-medrag-medqa"})
    assert not at.exception
    assert at.metric[0].value == "–"
    assert "the paper gives neither both accuracies nor the improvement" in text_of(at)
    at.number_input(key="claims.effect").set_value(10.0).run()
    assert at.metric[0].value != "–"


def test_on_the_embedded_model_the_page_says_it_is_not_the_papers_model(tmp_path):
    at = claim_page(tmp_path, None)  # the settings' model: the embedded one, not started to be named
    assert not at.exception
    assert "is not the papers' model" in at.info[0].value and "1.5B" in at.info[0].value
    assert any("free (local)" in c.value for c in at.caption)
