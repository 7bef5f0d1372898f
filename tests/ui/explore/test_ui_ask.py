"""The Ask page with a scripted model: a run end to end, the option editor, and every kind of bad input."""

from __future__ import annotations

import socket

from streamlit.testing.v1 import AppTest

from core.engine.store import RunStore
from tests.fakes import ListRetriever, ScriptedLLM, make_hits, until_runs_end
from ui.common.keys import ENDPOINT, KNOB_DEFAULTS, LLM_OVERRIDE, RETRIEVER_OVERRIDE


def ask_page(llm=None, retriever=None) -> AppTest:
    at = AppTest.from_string("from ui.explore.page import page\npage()", default_timeout=30)
    if llm is not None:
        at.session_state[LLM_OVERRIDE] = llm
    if retriever is not None:
        at.session_state[RETRIEVER_OVERRIDE] = retriever
    return at.run()


def fill(at: AppTest, text: str, options: list[str]) -> AppTest:
    at.text_area(key="ask.text").input(text)
    for uid, option in enumerate(options):
        at.text_input(key=f"ask.opt.{uid}").input(option)
    for uid in range(len(options), 4):  # the editor starts with A-D
        at.button(key=f"ask.remove.{uid}").click()
    return at.run()


def click_run(at: AppTest) -> AppTest:
    return until_runs_end(at.button(key="ask.go").click().run())


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_a_cot_run_shows_its_answer_trace_and_is_saved():
    llm = ScriptedLLM().on("Think step by step", {"reasoning": "Insulin lowers blood glucose.", "answer": "A"})
    at = fill(ask_page(llm), "Which hormone lowers blood glucose?", ["Insulin", "Glucagon"])
    at = click_run(at)
    assert not at.exception and not at.error
    assert at.status[0].label.startswith("CoT: done in") and at.status[0].state == "complete"
    assert '<span class="letter">A</span>Insulin' in text_of(at)
    assert len(at.chat_message) == 1 and "Insulin lowers blood glucose" in text_of(at)
    runs = RunStore().list_runs()
    assert len(runs) == 1 and runs[0]["status"] == "ok" and runs[0]["answer"]["choice"] == "A"
    assert f"Saved as run {runs[0]['id']}" in "\n".join(c.value for c in at.caption)
    assert len(llm.calls) == 1


def test_option_editor_adds_and_removes_lettered_options():
    at = ask_page(ScriptedLLM())
    letters = ["**A**", "**B**", "**C**", "**D**"]
    assert [m.value for m in at.markdown if m.value in letters] == letters
    at.text_input(key="ask.opt.1").input("second").run()
    at.button(key="ask.remove.0").click().run()  # B moves up to A and keeps its text
    assert at.text_input(key="ask.opt.1").value == "second"
    assert at.text_input(key="ask.opt.1").label == "Option A"
    at.button(key="ask.add").click().run()
    assert [t.label for t in at.text_input] == ["Option A", "Option B", "Option C", "Option D"]
    at.radio(key="ask.format").set_value("Free text").run()
    assert not at.text_input  # a free-text question has no options


def test_empty_question_is_refused_with_a_clear_message():
    llm = ScriptedLLM()
    at = click_run(ask_page(llm))
    assert at.error[0].value == "The question is empty: type a question first."
    assert llm.calls == [] and RunStore().list_runs() == []


def test_one_option_is_refused_with_a_clear_message():
    llm = ScriptedLLM()
    at = click_run(fill(ask_page(llm), "Is this enough?", ["Only one"]))
    assert "needs at least two options" in at.error[0].value
    assert llm.calls == [] and RunStore().list_runs() == []


def test_an_unreachable_endpoint_is_named_and_the_app_keeps_working(monkeypatch):
    monkeypatch.setenv("MEDRAG_MAX_RETRIES", "0")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    at = AppTest.from_string("from ui.explore.page import page\npage()", default_timeout=60)
    at.session_state[ENDPOINT] = {
        "embedded": False,
        "base_url": f"http://127.0.0.1:{port}/v1",
        "model": "m",
        "timeout": 5.0,
    }
    at = click_run(fill(at.run(), "Which hormone lowers blood glucose?", ["Insulin", "Glucagon"]))
    assert not at.exception
    assert "The run failed:" in text_of(at)
    assert any(f"could not reach the LLM endpoint at http://127.0.0.1:{port}/v1" in e.value for e in at.error)
    assert at.status[0].state == "error"
    assert RunStore().list_runs()[0]["status"] == "error"
    # the page still works: asked again (the form filled with the same question), a model that answers succeeds
    at.session_state[LLM_OVERRIDE] = ScriptedLLM().on("Think step by step", {"reasoning": "r", "answer": "A"})
    at = click_run(at.button(key="ask.again").click().run())
    assert '<span class="letter">A</span>Insulin' in text_of(at)


def test_a_run_failing_half_way_keeps_its_partial_trace():
    llm = ScriptedLLM().enqueue("I cannot answer in JSON.", "Still not JSON.")
    at = ask_page(llm, ListRetriever(make_hits(5)))
    at.selectbox(key="ask.method").set_value("medrag").run()
    at = click_run(fill(at, "Which drug treats disease 1?", ["aspirin", "metformin"]))
    assert not at.exception
    text = text_of(at)
    assert "The run failed:" in text and "could not be parsed" in text
    assert "retrieved **5** snippets" in text  # the retrieval that happened before the failure
    assert "Still not JSON" in text  # and the reply that could not be used
    saved = RunStore().load_run(RunStore().list_runs()[0]["id"])
    assert [e.kind for e in saved.events] == ["retrieval", "agent_message", "error"]


def test_knobs_start_from_the_settings_defaults_with_their_descriptions():
    at = AppTest.from_string("from ui.explore.page import page\npage()", default_timeout=30)
    at.session_state[LLM_OVERRIDE] = ScriptedLLM()
    at.session_state[KNOB_DEFAULTS] = {"cot": {"max_tokens": 128}}
    at.run()
    assert at.number_input(key="ask.knobs.cot.max_tokens").value == 128
    assert "budget for the reasoning" in at.number_input(key="ask.knobs.cot.max_tokens").help


def test_the_answer_format_knob_starts_automatic_and_a_run_records_the_backends_format():
    """Automatic stands for the backend's best (an endpoint's is the papers' order); choosing one is kept."""
    llm = ScriptedLLM().on("Think step by step", {"reasoning": "r", "answer": "A"})
    at = ask_page(llm)
    knob = at.selectbox(key="ask.knobs.cot.answer_format")
    assert knob.value is None and knob.options == ["automatic", "reasoning first", "answer first", "answer only"]
    at = click_run(fill(at, "Which hormone lowers blood glucose?", ["Insulin", "Glucagon"]))
    assert RunStore().load_run(RunStore().list_runs()[0]["id"]).answer.answer_format == "reasoning first"
    at = at.button(key="ask.again").click().run()  # the form again, with the knobs the run had
    assert at.selectbox(key="ask.knobs.cot.answer_format").value == "reasoning first"
    at.selectbox(key="ask.knobs.cot.answer_format").set_value("answer only").run()
    at = click_run(at)
    assert RunStore().load_run(RunStore().list_runs()[0]["id"]).params["answer_format"] == "answer only"
    assert "Answered answer only (no reasoning asked for)" in [c.value for c in at.caption]


def test_a_teaching_case_fills_the_question_and_its_key_is_shown_after_the_run():
    from core.studio.teaching import load_cases

    case = load_cases()[0]
    llm = ScriptedLLM().on("Think step by step", {"reasoning": "r", "answer": case.answer})
    at = ask_page(llm)
    at.selectbox(key="ask.case").set_value(case.id).run()
    assert at.text_area(key="ask.text").value == case.question
    assert [t.value for t in at.text_input] == list(case.options.values())
    at = click_run(at)
    assert not at.exception
    reveal = next(e for e in at.expander if e.label.startswith("Teaching pack answer"))
    assert reveal.label == "Teaching pack answer and note: open to reveal"  # the title does not give the verdict away
    assert case.teaching_note[:40] in text_of(at).replace("\\", "")
