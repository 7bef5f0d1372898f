"""The Compare page with a scripted model: methods run at the same time, side by side, summarised on top."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.engine.store import RunStore
from core.engine.store.groups import list_groups
from tests.fakes import ListRetriever, ScriptedLLM, make_hits, together, until_runs_end
from ui.common.keys import LLM_OVERRIDE, RETRIEVER_OVERRIDE

QUESTION = "Which drug treats disease 1?"


def compare_page(llm, retriever) -> AppTest:
    at = AppTest.from_string("from ui.compare.page import page\npage()", default_timeout=30)
    at.session_state[LLM_OVERRIDE] = llm
    at.session_state[RETRIEVER_OVERRIDE] = retriever
    at.run()
    at.text_area(key="compare.text").input(QUESTION)
    at.text_input(key="compare.opt.0").input("aspirin")
    at.text_input(key="compare.opt.1").input("metformin")
    at.button(key="compare.remove.2").click().run()
    at.button(key="compare.remove.3").click().run()
    return at


def run_all(at: AppTest) -> AppTest:
    return until_runs_end(at.button(key="compare.go").click().run())


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_two_methods_run_concurrently_and_are_compared():
    both = together(2)  # each method answers only once both are thinking at the same time
    llm = (
        ScriptedLLM()
        .on("Documents:", both({"reasoning": "Doc 1 names metformin.", "answer": "B", "cited_ids": ["teaching-1"]}))
        .on("Think step by step", both({"reasoning": "Metformin is first line.", "answer": "B"}))
    )
    at = compare_page(llm, ListRetriever(make_hits(6)))
    assert at.multiselect(key="compare.methods").value == ["cot", "medrag"]
    at = run_all(at)
    assert not at.exception and not at.error
    assert llm.max_active == 2  # both methods were thinking at the same time
    assert [s.state for s in at.status] == ["complete", "complete"]
    assert ":green-badge[agree] All 2 answers are the same: **B**." in text_of(at)
    summary = at.dataframe[0].value  # the summary sits above everything else
    assert list(summary["method"]) == ["CoT", "MedRAG"] and list(summary["calls"]) == [1, 1]
    assert list(summary["retrievals"]) == [0, 1]
    text = text_of(at)
    # swimlanes: one row per common stage, CoT has nothing to retrieve, MedRAG's cell summarises its retrieval
    heads = [m.value for m in at.markdown if 'class="lane-head"' in m.value]
    assert [h.split(">")[1].split("<")[0] for h in heads] == [
        "Understand the question",
        "Query",
        "Retrieve / generate",
        "Judge the evidence",
        "Answer",
    ]
    assert "**Retriever** · 1 retrieval \\(6 snippets\\)" in text and ":gray[— no step here]" in text
    assert "retrieved **6** snippets" in text  # inside the cell's expander
    assert text.count('<span class="letter">B</span>metformin') == 4  # side by side, and in each full trace
    assert {"CoT", "MedRAG"} <= {t.label for t in at.tabs}
    runs = RunStore().list_runs()
    assert len(runs) == 2
    # the comparison is kept as a group, and the URL names its runs so a reload or a link finds them
    assert list_groups(RunStore())[0]["run_ids"] == at.query_params["runs"].split(",")
    assert set(at.query_params["runs"].split(",")) == {r["id"] for r in runs}


def test_disagreement_is_spelled_out_and_one_failure_does_not_stop_the_other():
    llm = (
        ScriptedLLM()
        .on("Documents:", "no JSON here")
        .on("Think step by step", {"reasoning": "Aspirin.", "answer": "A"})
    )
    at = run_all(compare_page(llm, ListRetriever(make_hits(3))))
    assert not at.exception
    assert sorted(s.state for s in at.status) == ["complete", "error"]
    assert "Fewer than two methods gave an answer" in text_of(at)
    assert "The run failed:" in text_of(at) and '<span class="letter">A</span>aspirin' in text_of(at)


def test_run_needs_two_methods():
    at = compare_page(ScriptedLLM(), ListRetriever(make_hits(3)))
    at.multiselect(key="compare.methods").set_value(["cot"]).run()
    assert next(b for b in at.button if b.label == "Run all").disabled
