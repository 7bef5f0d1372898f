"""Pages in shared mode (AppTest over a real store): what a visitor is offered and what happens when a visitor acts
anyway, the owner's sign-in and allowances, and a visitor's live runs within the owner's limit."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.engine import paths
from core.engine.paths import REPO_ROOT
from core.engine.store import RunStore
from core.studio.access import Access, Allowances, Mode, Role, load_allowances, save_allowances
from tests.fakes import ListRetriever, ScriptedLLM, make_hits, until_runs_end
from tests.ui.history.test_ui_history import saved_runs
from tests.ui.navigation_titles import navigation_titles
from tests.waiting import Gate, patience
from ui.common.keys import LLM_OVERRIDE, RETRIEVER_OVERRIDE

APP = str(REPO_ROOT / "streamlit_app.py")
PASSCODE = "correct-horse-7"
SIGN_IN = "FormSubmitter:access.sign_in-Sign in"


@pytest.fixture(autouse=True)
def shared(monkeypatch):
    monkeypatch.setenv("MEDRAG_MODE", "shared")
    monkeypatch.setenv("MEDRAG_OWNER_PASSCODE", PASSCODE)


JOB_OF = {"ask": "explore"}  # a page's job package, where it is not named alike


def page(module: str, **state) -> AppTest:
    at = AppTest.from_string(f"from ui.{JOB_OF.get(module, module)}.page import page\npage()", default_timeout=30)
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def texts(at: AppTest) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [e.value for e in at.error])


def test_a_visitor_is_told_who_they_are_and_signs_in_as_the_owner_only_with_the_passcode():
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert not at.exception
    side = texts(at.sidebar)
    assert "**Visitor**" in side and "label snippets under your own name" in side and "run methods live" not in side
    for attempt in ("guess-one", "guess-two"):
        at.sidebar.text_input(key="access.passcode").input(attempt)
        at.sidebar.button(key=SIGN_IN).click().run()
        assert "That is not the owner's passcode." in texts(at.sidebar)
    at.sidebar.text_input(key="access.passcode").input(PASSCODE)
    at.sidebar.button(key=SIGN_IN).click().run()
    assert "**Owner** · signed in with the passcode" in texts(at.sidebar)
    at.sidebar.toggle(key="access.allow_live").set_value(True).run()
    assert load_allowances(paths.db_path()) == Allowances(live_runs=True, live_runs_each=1)


def test_owner_pages_are_not_in_a_visitors_navigation_and_refuse_when_reached():
    assert navigation_titles("SHARED", "VISITOR") == {
        "": ["MedRAG Studio"],
        "Run": ["Ask", "Compare", "Workshop"],
        "Review": ["History", "Annotate"],
    }
    guarded = AppTest.from_string(
        "from core.studio.access import Action\nfrom ui.navigation import owners_only, settings\n"
        "owners_only(settings.page, Action.SETTINGS)()",
        default_timeout=30,
    ).run()
    assert "Only the studio's owner can change the settings." in guarded.error[0].value
    assert not guarded.title  # the settings page itself never ran


def test_a_visitor_cannot_run_delete_import_or_adjudicate():
    _, medrag_id = saved_runs()
    ask = page("ask")
    assert ask.button(key="ask.go").disabled and "has not opened live runs to visitors" in texts(ask)
    history = page("history")
    assert not [b for b in history.button if b.key == "history.delete"]  # not offered
    assert "You can download the runs you started in this browser" in texts(history)
    assert "Only the studio's owner can import run files." in texts(history)
    history.session_state["history.confirm_delete"] = (
        medrag_id  # the run History opens first  # acting anyway: refused where it happens
    )
    history.run()
    history.button(key="history.delete_yes").click().run()
    assert "it is not one you started" in history.error[0].value and len(RunStore().list_runs()) == 2
    annotate = page("annotate")
    assert not [t for t in annotate.toggle if t.key == "annotate.open"]  # no open mode: judging stays blind


def test_a_visitors_live_runs_stay_within_the_owners_limit():
    save_allowances(paths.db_path(), Allowances(live_runs=True, live_runs_each=1), Access(Mode.SHARED, Role.OWNER))
    llm = (
        ScriptedLLM()
        .on("Documents:", {"reasoning": "Doc 1.", "answer": "B", "cited_ids": []})
        .on("Think step by step", {"reasoning": "Metformin.", "answer": "B"})
    )
    at = page("compare", **{LLM_OVERRIDE: llm, RETRIEVER_OVERRIDE: ListRetriever(make_hits(3))})
    at.text_area(key="compare.text").input("Which drug treats disease 1?")
    at.text_input(key="compare.opt.0").input("aspirin")
    at.text_input(key="compare.opt.1").input("metformin")
    at.button(key="compare.remove.2").click().run()
    at.button(key="compare.remove.3").click().run()
    at.button(key="compare.go").click().run()
    assert "A visitor may have 1 live run going at once on this studio (this needs 2)" in at.error[0].value
    assert RunStore().list_runs() == []
    at.multiselect(key="compare.methods").set_value(["cot"]).run()  # one method: within the limit (via Ask)
    ask = page("ask", **{LLM_OVERRIDE: llm})
    ask.text_area(key="ask.text").input("Which drug treats disease 1?")
    ask.text_input(key="ask.opt.0").input("aspirin")
    ask.text_input(key="ask.opt.1").input("metformin")
    ask.button(key="ask.remove.2").click().run()
    ask.button(key="ask.remove.3").click().run()
    ask = until_runs_end(ask.button(key="ask.go").click().run())
    assert not ask.error and [r["status"] for r in RunStore().list_runs()] == ["ok"]
    run_id = RunStore().list_runs()[0]["id"]
    history = page("history", **{"access.my_runs": {run_id}})
    assert [b for b in history.button if b.key == "history.delete"]  # a visitor's own run is theirs to delete


def test_a_visitor_sees_every_running_job_and_stops_only_their_own():
    from core.engine.live_run import LiveRun
    from core.engine.question import Question
    from ui.common.jobs import runner

    # both calls are held for good: the one stopped ends only by its cut, the other goes on
    slow = ScriptedLLM(gate=Gate()).on("Think step by step", {"reasoning": "Metformin.", "answer": "B"})
    question = Question(text="Which drug treats disease 1?", options={"A": "aspirin", "B": "metformin"})
    mine, theirs = (
        runner().start(LiveRun("cot", question, {}, llm=slow, retriever=None, store=RunStore(), owner=f"session {who}"))
        for who in ("visitor-1", "visitor-2")
    )
    try:
        history = page("history", **{"access.session": "visitor-1"})  # the first visitor's browser
        assert "**Running now** · 2" in texts(history)
        assert [b.key for b in history.button if b.key.startswith("history.stop.")] == [f"history.stop.{mine.id}"]
        history.button(key=f"history.stop.{mine.id}").click().run()
        assert mine.until_done(patience()) and mine.status == "stopped" and not theirs.done
    finally:
        theirs.cancel()
        theirs.until_done(5)


def test_a_visitors_runs_go_to_the_embedded_model_never_to_the_owners_endpoint(monkeypatch):
    monkeypatch.setenv("MEDRAG_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MEDRAG_API_KEY", "sk-the-owners-key")
    script = (
        "import streamlit as st\nfrom ui.common import access\nfrom ui.runs.launch import llm_for\n"
        "endpoint = llm_for(access.current()).endpoint\n"
        "st.session_state['used'] = (endpoint.embedded, endpoint.base_url, endpoint.api_key)"
    )
    visitor = AppTest.from_string(script, default_timeout=10).run()
    assert visitor.session_state["used"] == (True, None, "")
    owner = AppTest.from_string(script, default_timeout=10)
    owner.session_state["access.owner"] = True  # signed in
    assert owner.run().session_state["used"][1] == "http://127.0.0.1:9/v1"


def test_two_visitors_cannot_label_under_one_name():
    first = page("annotate")
    first.text_input(key="annotate.name_input").input("Ana")
    first.button(key="FormSubmitter:annotate.who-Start labelling").click().run()
    assert "Labelling as **Ana**" in texts(first)
    second = page("annotate")  # another browser session, another client
    second.text_input(key="annotate.name_input").input("ana")
    second.button(key="FormSubmitter:annotate.who-Start labelling").click().run()
    assert "Someone else labels as “Ana” on this studio" in second.error[0].value


def test_wrong_room_codes_are_limited_per_client():
    at = AppTest.from_string("from ui.workshop.page import page\npage()", default_timeout=30)
    at.query_params["room"] = "ABCDEF"
    for _ in range(10):
        assert "no room has the code ABCDEF" in at.run().error[0].value
    assert "too many wrong room codes from this computer; try again in 300 s" in at.run().error[0].value
    other = AppTest.from_string("from ui.workshop.page import page\npage()", default_timeout=30)
    other.query_params["room"] = "ABCDEF"
    assert "no room has the code ABCDEF" in other.run().error[0].value  # another client is not held up


def test_joins_of_one_room_from_one_computer_are_limited():
    from core.studio.rooms import RoomStore

    presenter = AppTest.from_string("from ui.workshop.page import page\npage()", default_timeout=30)
    presenter.session_state["access.owner"] = True  # signed in: the owner opens rooms
    presenter.run().multiselect(key="workshop.methods.stemi").set_value(["medrag"]).run()
    presenter.button(key="workshop.open_room").click().run()
    code = presenter.query_params["room"]
    code = code if isinstance(code, str) else code[0]
    at = AppTest.from_string("from ui.workshop.page import page\npage()", default_timeout=30)
    members = []
    for _ in range(6):  # one browser (one computer) joining again and again under made-up names
        at.query_params.clear()
        at.query_params["room"] = code
        at.run()
        at.text_input(key="room.join.name").set_value(f"person {len(members) + 1}")
        at.button(key="FormSubmitter:room.join-Join").click().run()
        members = RoomStore().members(code)
    assert len(members) == 5
    assert f"this computer has joined room {code} 5 times in the last 10 minutes" in at.error[0].value


@pytest.mark.parametrize("module", ["ask", "compare"])
def test_a_visitor_is_told_their_runs_go_to_the_embedded_model_and_never_sees_the_owners_endpoint(module, monkeypatch):
    monkeypatch.setenv("MEDRAG_BASE_URL", "http://10.20.30.40:8000/v1")  # the owner's endpoint
    monkeypatch.setenv("MEDRAG_MODEL", "owners-model")
    visitor = texts(page(module))
    assert "Runs on the embedded model" in visitor
    assert "10.20.30.40" not in visitor and "owners-model" not in visitor
    owner = texts(page(module, **{"access.owner": True}))
    assert "Runs on the LLM endpoint at http://10.20.30.40:8000/v1 (owners-model)" in owner
