"""A run's life on the Ask and History pages, with a slow scripted model: Stop from the first redraw, a new run
clears the old one, buttons come back however the run ends, and a reload (a new session) re-attaches."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.store import RunStore
from tests.fakes import ListRetriever, ScriptedLLM, make_hits, until_runs_end
from tests.test_ui_ask import ask_page, fill, text_of
from ui.live import live_runs
from ui.state import LLM_OVERRIDE

REPLY = {"reasoning": "Insulin lowers blood glucose.", "answer": "A", "cited_ids": []}


def medrag_page(llm, retrieval_seconds: float) -> AppTest:
    """MedRAG with a slow retriever: Stop lands between its two steps."""
    at = ask_page(llm, ListRetriever(make_hits(4), delay=retrieval_seconds))
    at.selectbox(key="ask.method").set_value("medrag").run()
    return fill(at, "Which hormone lowers blood glucose?", ["Insulin", "Glucagon"])


def buttons(at: AppTest) -> dict[str, bool]:
    """Label -> disabled, for the Run and Stop buttons on screen."""
    return {b.label: b.disabled for b in at.button if b.label in ("Run", "Stop", "Stopping…")}


def test_stop_is_there_at_once_and_the_buttons_come_back_when_the_run_ends():
    llm = ScriptedLLM(delay=0.5).on("Documents:", REPLY)
    at = medrag_page(llm, 1.5)
    at = at.button(key="ask.go").click().run()
    assert buttons(at) == {"Run": True, "Stop": False}  # the redraw after the click: the run is going
    run_id = at.query_params["run"]
    assert live_runs().get(run_id) is not None and at.status[0].label.startswith("MedRAG: running")
    at = until_runs_end(at)
    assert buttons(at) == {"Run": False}
    assert '<span class="letter">A</span>Insulin' in text_of(at)
    # a second run: the first one's answer is not drawn while it goes
    at = at.button(key="ask.go").click().run()
    assert at.query_params["run"] != run_id and "Insulin lowers" not in text_of(at)
    at = at.button(key="ask.stop").click().run()
    assert buttons(at) == {"Run": True, "Stopping…": True}
    at = until_runs_end(at)
    assert buttons(at) == {"Run": False}
    assert at.status[0].label.startswith("MedRAG: stopped after")
    assert [r["status"] for r in RunStore().list_runs()] == ["cancelled", "ok"]


def test_a_new_session_on_the_runs_link_follows_it_live_and_can_stop_it():
    llm = ScriptedLLM(delay=0.5).on("Documents:", REPLY)
    run_id = medrag_page(llm, 3).button(key="ask.go").click().run().query_params["run"]
    reloaded = AppTest.from_string("from ui.pages.ask import page\npage()", default_timeout=30)
    reloaded.session_state[LLM_OVERRIDE] = llm
    reloaded.query_params["run"] = run_id
    reloaded.run()
    assert reloaded.status[0].label.startswith("MedRAG: running")
    history = AppTest.from_string("from ui.pages.history import page\npage()", default_timeout=30)
    history.run()
    assert any("Running now" in m.value for m in history.markdown)
    assert history.button(key=f"history.stop.{run_id}")
    history.button(key=f"history.stop.{run_id}").click().run()  # stopped from History
    reloaded = until_runs_end(reloaded)
    assert RunStore().load_run(run_id).status == "cancelled"
    assert reloaded.status[0].label.startswith("MedRAG: stopped after")
