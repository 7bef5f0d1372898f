"""The History page: saved runs listed, filtered, reopened with the trace they had, and deleted."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from tests.fakes import ListRetriever, ScriptedLLM, make_hits

MC = Question(text="Which drug treats disease 1?", options={"A": "aspirin", "B": "metformin"})


def saved_runs() -> tuple[str, str]:
    store = RunStore()
    cot = execute("cot", MC, llm=ScriptedLLM().enqueue({"reasoning": "r", "answer": "A"}), store=store)
    medrag = execute(
        "medrag",
        MC,
        llm=ScriptedLLM().enqueue({"reasoning": "Doc 1.", "answer": "B", "cited_ids": ["teaching-1"]}),
        retriever=ListRetriever(make_hits(4)),
        store=store,
    )
    return cot.id, medrag.id


def history_page() -> AppTest:
    return AppTest.from_string("from ui.history.page import page\npage()", default_timeout=20).run()


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_no_runs_yet_says_where_they_come_from():
    at = history_page()
    assert "No runs yet" in at.info[0].value


def test_reopening_a_run_shows_exactly_its_trace():
    cot_id, medrag_id = saved_runs()
    at = history_page()
    assert not at.exception
    assert list(at.dataframe[0].value["run"]) == [medrag_id, cot_id]  # newest first
    at.selectbox(key="history.open").set_value(medrag_id).run()
    text = text_of(at)
    assert '<span class="letter">B</span>metformin' in text and 'class="snip cited"' in text
    assert "retrieved **4** snippets" in text and at.tabs[0].label == "Trace · 3 events"
    assert "**Question:** Which drug treats disease 1?" in text


def test_filter_by_method_and_delete():
    cot_id, medrag_id = saved_runs()
    at = history_page()
    at.selectbox(key="history.method").set_value("cot").run()
    assert list(at.dataframe[0].value["run"]) == [cot_id]
    at.button(key="history.delete").click().run()
    assert "Delete run" in at.warning[0].value
    at.button(key="history.delete_yes").click().run()
    assert [r["id"] for r in RunStore().list_runs()] == [medrag_id]
    assert not at.exception
    assert list(at.dataframe[0].value["run"]) == [medrag_id]  # no cot run is left, so the filter falls back to all
