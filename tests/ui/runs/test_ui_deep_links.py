"""Links between pages: /history?run=, /compare?runs=, /ask?run= open what they name, with no model."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.ui.history.test_ui_history import saved_runs

JOB_OF = {"ask": "explore"}  # a page's job package, where it is not named alike


def open_page(name: str, **query: str) -> AppTest:
    at = AppTest.from_string(f"from ui.{JOB_OF.get(name, name)}.page import page\npage()", default_timeout=20)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_history_opens_the_linked_run_even_when_it_is_not_the_newest():
    cot_id, _ = saved_runs()
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
    # what they were asked is at the top, read-only: no form with a placeholder question above them
    assert "**Method** · MedRAG" in text and "**Method** · CoT" in text and "Which drug treats" in text
    assert not at.text_area and not at.multiselect
    at = at.button(key="compare.again").click().run()  # the form, filled with both methods and the question
    assert at.multiselect(key="compare.methods").value == ["medrag", "cot"]
    assert at.text_area(key="compare.text").value.startswith("Which drug treats") and "runs" not in at.query_params


def test_ask_reattaches_to_a_saved_run():
    cot_id, _ = saved_runs()
    at = open_page("ask", run=cot_id)
    assert not at.exception
    assert '<span class="letter">A</span>aspirin' in text_of(at)
    assert not at.button(key="ask.again").disabled  # it has ended: Ask again is available, no Stop
    assert not [b for b in at.button if b.label in ("Stop", "Stopping…")]


def _saved(method: str, question: str, options: dict[str, str]) -> str:
    from core.engine.methods import get
    from core.engine.store import RunStore
    from core.engine.trace import Answer, Event, Run

    params = get(method).params(answer_format="answer first").model_dump()
    run = Run(method=method, question=question, options=options, params=params, status="ok")
    store = RunStore()
    store.create_run(run)
    answer = Answer(choice=next(iter(options), None), text="an answer")
    store.append_event(Event(run_id=run.id, seq=0, stage="final answer", agent="Answer", payload=answer))
    run.answer = answer
    store.finish_run(run)
    return run.id


def test_a_link_to_a_run_of_every_method_shows_its_own_method_and_question_then_ask_again_fills_the_form():
    from core.engine.methods import registry

    for n, (name, spec) in enumerate(registry().items()):
        question = f"Question {n} for {spec.label}: which artery supplies the sinoatrial node?"
        options = {"A": f"Right coronary artery {n}", "B": "Left circumflex artery"} if n % 2 == 0 else {}
        at = open_page("ask", run=_saved(name, question, options))
        assert not at.exception
        text = text_of(at).replace("\\", "")
        assert f"**Method** · {spec.label}" in text and question in text  # its own, read-only
        assert (
            (f"**A**. Right coronary artery {n}" in text)
            if options
            else "Free text: no options" in [c.value for c in at.caption]
        )
        assert not at.text_area and not [s for s in at.selectbox if s.key == "ask.method"]  # no editable form
        at = at.button(key="ask.again").click().run()
        assert at.selectbox(key="ask.method").value == name and at.text_area(key="ask.text").value == question
        assert at.radio(key="ask.format").value == ("Multiple choice" if options else "Free text")
        assert [t.value for t in at.text_input if t.key and t.key.startswith("ask.opt.")] == list(options.values())
        assert at.selectbox(key=f"ask.knobs.{name}.answer_format").value == "answer first"
        assert "run" not in at.query_params
