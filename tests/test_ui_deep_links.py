"""Links between pages: /history?run=, /compare?runs=, /ask?run= open what they name, with no model."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.test_ui_history import saved_runs


def open_page(name: str, **query: str) -> AppTest:
    at = AppTest.from_string(f"from ui.pages.{name} import page\npage()", default_timeout=20)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_history_opens_the_linked_run_even_when_it_is_not_the_newest():
    cot_id, medrag_id = saved_runs()
    at = open_page("history", run=cot_id)
    assert not at.exception
    assert at.selectbox(key="history.open").value == cot_id
    assert '<span class="letter">A</span>aspirin' in text_of(at)


def test_history_names_a_run_that_does_not_exist():
    saved_runs()
    at = open_page("history", run="nosuchrun")
    assert not at.exception
    assert "No saved run has the id “nosuchrun”" in at.warning[0].value


def test_compare_reopens_saved_runs_side_by_side_without_a_model():
    cot_id, medrag_id = saved_runs()
    at = open_page("compare", runs=f"{medrag_id},{cot_id}")
    assert not at.exception
    text = text_of(at)
    assert ":red-badge[disagree]" in text
    assert list(at.dataframe[0].value["method"]) == ["MedRAG", "CoT"]  # in the link's order
    assert [t.label for t in at.tabs if t.label in ("MedRAG", "CoT")] == ["MedRAG", "CoT"]
    assert at.button(key="compare.keep")  # runs not yet kept together can be kept as a comparison


def test_ask_reattaches_to_a_saved_run():
    cot_id, _ = saved_runs()
    at = open_page("ask", run=cot_id)
    assert not at.exception
    assert '<span class="letter">A</span>aspirin' in text_of(at)
    assert not at.button(key="ask.go").disabled  # it has ended: Run is available, no Stop
    assert not [b for b in at.button if b.label in ("Stop", "Stopping…")]
