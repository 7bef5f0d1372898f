"""A run's life on the Ask and History pages, with a scripted model whose calls wait at a gate the test opens: Stop
from the first redraw, a new run clears the old one, buttons come back however the run ends, and a reload (a new
session) re-attaches."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.engine.store import RunStore
from tests.fakes import ListRetriever, ScriptedLLM, make_hits, until_runs_end
from tests.ui.explore.test_ui_ask import ask_page, fill, text_of
from tests.waiting import Gate, patience, wait_until
from ui.common import jobs
from ui.common.jobs import live, runner
from ui.common.keys import LLM_OVERRIDE

REPLY = {"reasoning": "Insulin lowers blood glucose.", "answer": "A", "cited_ids": []}


def medrag_page(llm, retrieval: Gate | None = None) -> AppTest:
    """MedRAG: a retrieval (held at ``retrieval`` when given), then the reader's call."""
    at = ask_page(llm, ListRetriever(make_hits(4), hold=retrieval and (lambda query: retrieval.wait())))
    at.selectbox(key="ask.method").set_value("medrag").run()
    return fill(at, "Which hormone lowers blood glucose?", ["Insulin", "Glucagon"])


def buttons(at: AppTest) -> dict[str, bool]:
    """Label -> disabled, for the Run, Ask again and Stop buttons on screen."""
    return {b.label: b.disabled for b in at.button if b.label in ("Run", "Ask again", "Stop", "Stopping…")}


def test_stop_is_there_at_once_and_the_buttons_come_back_when_the_run_ends(monkeypatch):
    monkeypatch.setattr("ui.common.jobs.STOP_WAIT_SECONDS", patience())  # however long the cut takes here
    retrieval, reader = Gate(), Gate()
    llm = ScriptedLLM(gate=reader).on("Documents:", REPLY)
    at = medrag_page(llm, retrieval)
    at = at.button(key="ask.go").click().run()
    assert buttons(at) == {"Ask again": False, "Stop": False}  # the redraw after the click: the run is going
    run_id = at.query_params["run"]
    assert live(run_id) is not None and at.status[0].label.startswith("MedRAG: running")
    retrieval.open()
    reader.let(1)  # the first run's reader answers; the second run's is held until Stop cuts it
    at = until_runs_end(at)
    assert buttons(at) == {"Ask again": False}
    assert '<span class="letter">A</span>Insulin' in text_of(at)
    # a second run: the first one's answer is not drawn while it goes
    at = at.button(key="ask.again").click().run()
    assert buttons(at) == {"Run": False} and "Insulin lowers" not in text_of(at)
    at = at.button(key="ask.go").click().run()
    assert at.query_params["run"] != run_id and "Insulin lowers" not in text_of(at)
    at = at.button(key="ask.stop").click().run()
    # Stop waits a moment for the run to end, so the page drawn next has it ended
    assert not runner().running() and buttons(at) == {"Ask again": False}
    assert at.status[0].label.startswith("MedRAG: stopped after")
    assert [r["status"] for r in RunStore().list_runs()] == ["cancelled", "ok"]


def test_a_run_ending_while_its_page_draws_leaves_no_stop_behind(monkeypatch):
    """The run ends between the page drawing its Stop and drawing the run (a repeat served from the cache ends in a
    moment): the page must not stay with a Stop for a run that has ended, nothing left to redraw it."""
    reader = Gate()
    llm = ScriptedLLM(gate=reader).on("Documents:", REPLY)
    at = medrag_page(llm).button(key="ask.go").click().run()
    wait_until(lambda: reader.held, "the reader's call")
    drawn = jobs.stop_button

    def stop_then_the_run_ends(going, **kwargs):
        drawn(going, **kwargs)
        if going:
            reader.open()
            wait_until(lambda: all(job.done for job in going), "the run's end, right after its Stop was drawn")

    monkeypatch.setattr(jobs, "stop_button", stop_then_the_run_ends)
    at = at.run()  # a redraw while the run goes, in which it ends
    assert not runner().running() and buttons(at) == {"Ask again": False}
    assert at.status[0].label.startswith("MedRAG: done in")


def test_a_new_session_on_the_runs_link_follows_it_live_and_can_stop_it():
    gate = Gate()  # the reader is held until the run is stopped
    llm = ScriptedLLM(gate=gate).on("Documents:", REPLY)
    run_id = medrag_page(llm).button(key="ask.go").click().run().query_params["run"]
    wait_until(lambda: gate.held, "the reader's call")
    reloaded = AppTest.from_string("from ui.explore.page import page\npage()", default_timeout=30)
    reloaded.session_state[LLM_OVERRIDE] = llm
    reloaded.query_params["run"] = run_id
    reloaded.run()
    assert reloaded.status[0].label.startswith("MedRAG: Reader reading the prompt")
    history = AppTest.from_string("from ui.history.page import page\npage()", default_timeout=30)
    history.run()
    assert any("Running now" in m.value for m in history.markdown)
    assert history.button(key=f"history.stop.{run_id}")
    history.button(key=f"history.stop.{run_id}").click().run()  # stopped from History
    until_runs_end(reloaded)
    reloaded = reloaded.run()  # the other session's next redraw
    assert RunStore().load_run(run_id).status == "cancelled"
    assert reloaded.status[0].label.startswith("MedRAG: stopped after")


def test_a_reply_shows_field_by_field_while_written_and_stop_ends_it_mid_call():
    long_reply = {"reasoning": "Insulin lowers blood glucose by moving it into cells. " * 6, "answer": "A"}
    # the first third of the reply streams, then the call is held for good: only a cut can end it
    llm = ScriptedLLM(gate=Gate(), held_at=(1,)).on("Think step by step", long_reply)
    at = fill(ask_page(llm), "Which hormone lowers blood glucose?", ["Insulin", "Glucagon"])
    at = at.button(key="ask.go").click().run()
    run_id = at.query_params["run"]
    running = live(run_id)
    wait_until(
        lambda: running.working() and '"reasoning": "Insulin' in running.working()[0].text, "the reply's first words"
    )
    at.run()
    assert "now Clinician writing for" in at.status[0].label  # which agent works now, and for how long
    text = text_of(at)
    assert ":orange-badge[writing] **Clinician**" in text
    assert "**reasoning:** Insulin lowers blood glucose" in text and '{"reasoning"' not in text  # fields, not JSON
    at = at.button(key="ask.stop").click().run()
    at = until_runs_end(at)  # the call itself is cut, not waited for: it is never let on
    assert at.status[0].label.startswith("CoT: stopped after") and buttons(at) == {"Ask again": False}
    assert RunStore().load_run(run_id).status == "cancelled"


def test_a_run_another_process_is_writing_is_followed_through_the_store():
    from core.engine.trace import Event, Query, Run

    store = RunStore()
    run = Run(method="sema", question="Which drug treats disease 1?")
    store.create_run(run)  # as the command line would, in its own process
    store.append_event(
        Event(
            run_id=run.id,
            seq=0,
            stage="exploration turn 1",
            agent="E-Agent",
            payload=Query(text="disease 1 drug", purpose="initial"),
        )
    )
    at = AppTest.from_string("from ui.history.page import page\npage()", default_timeout=20)
    at.query_params["run"] = run.id
    at.run()
    assert not at.exception
    assert any("another process" in m.value for m in at.markdown)  # in Running now: follow here, stop there
    assert not [b for b in at.button if b.label == "Stop"]  # this server cannot stop it
    assert at.status[0].label.startswith("SEMA-RAG: running, after exploration turn 1 · E-Agent · 1 event")
    assert "Started by another process" in "\n".join(c.value for c in at.caption)


def test_a_run_behind_another_says_it_waits_and_behind_what_and_its_map_lights_the_waiting_stage(monkeypatch):
    """One slot: the second run's only call waits for the first's; its box says so, each step's icon says what it
    is doing, and the map lights the Clinician's stage, not nothing."""
    monkeypatch.setattr("core.engine.methods.contract.slots_of", lambda llm: 1)
    gate = Gate()  # both calls are held while they read the prompt
    llm = ScriptedLLM(gate=gate).on("Think step by step", REPLY)
    first = fill(ask_page(llm), "Which hormone lowers blood glucose?", ["Insulin", "Glucagon"])
    first = first.button(key="ask.go").click().run()
    wait_until(lambda: gate.held == 1, "the first run's call")
    first.run()
    assert first.status[0].label.startswith("CoT: Clinician reading the prompt")
    assert ":material/menu_book: **Clinician** :gray[reasoning] — reading the prompt" in text_of(first)
    second = fill(ask_page(llm), "Which hormone raises blood glucose?", ["Insulin", "Glucagon"])
    second = second.button(key="ask.go").click().run()
    wait_until(lambda: gate.held == 2, "the second run's call")  # in the queue, behind the first
    second.run()
    where = "the LLM endpoint at http://scripted.invalid/v1"
    assert second.status[0].label.startswith(f"CoT: Clinician waiting: 1 run ahead on {where}")
    assert second.status[0].state == "running"  # not ticked complete while it goes
    text = text_of(second).replace("\\", "")
    assert f":material/hourglass_top: **Clinician** :gray[reasoning] — waiting: 1 run ahead on {where}" in text
    assert "now: **Clinician reasons step by step and answers**" in "\n".join(c.value for c in second.caption)
    gate.open()
    second = until_runs_end(second)
    assert ":material/check_circle: **Clinician**" in text_of(second)  # done: a tick, only now


def test_a_reply_whose_first_field_is_being_named_shows_no_raw_brace():
    from streamlit.testing.v1 import AppTest

    def draw():
        from core.engine.trace import Partial
        from ui.runs.live_panel import partial_reply

        partial_reply(Partial(run_id="r", stage="reasoning", agent="Clinician", role="r", text='{ "', started=0))

    at = AppTest.from_function(draw).run()
    assert not [m for m in at.markdown if '{ "' in m.value.replace("\\", "")]
    assert any("starting its reply" in m.value for m in at.markdown)
