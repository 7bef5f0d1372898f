"""Ask: one method on one question; its steps appear live, then the whole trace.

The run shown is named in the URL (``/ask?run=<id>``), so a reload or a link re-attaches to it: live while it
goes on in this server, else its saved trace.
"""

from __future__ import annotations

import streamlit as st

from core.access import Action
from ui import access, state
from ui.chrome import header
from ui.knobs import knob_inputs, method_picker
from ui.launch import start
from ui.live import live_runs
from ui.live_panel import stop_button
from ui.method_map import method_map
from ui.question_form import question_form
from ui.run_display import show_run

SHOWN = "ask.run"  # the id of the run this tab shows


def shown_run_id() -> str | None:
    """The run named in the URL wins (a link, a reload); otherwise the one this tab last started."""
    from_url = st.query_params.get("run")
    if from_url:
        st.session_state[SHOWN] = from_url
    elif st.session_state.get(SHOWN):
        st.query_params["run"] = st.session_state[SHOWN]
    return st.session_state.get(SHOWN)


def page() -> None:
    header("Ask", "Pick a method and ask a question: each step appears as it happens, then the whole trace.")
    run_id = shown_run_id()
    live = live_runs().get(run_id)
    running = live is not None and not live.done
    setup, ask = st.columns([1, 2], gap="large")
    with setup:
        spec = method_picker("ask.method")
        with st.expander("Knobs", expanded=False):
            values = knob_inputs(spec, key="ask.knobs", defaults=state.knob_defaults(spec.name))
        if run_id is None:
            with st.expander("Method map", expanded=True, icon=":material/account_tree:"):
                method_map(spec, [])
    may_run = access.current().may(Action.LIVE_RUN)
    with ask:
        text, options = question_form("ask")
        go, stop = st.columns([1, 1])
        # Another key while a run goes: the browser then draws a new button when the run ends, where it could keep
        # showing the old one disabled after a stop whose rerun crossed the live panel's.
        clicked = go.button("Run", type="primary", icon=":material/play_arrow:", disabled=running or not may_run,
                            width="stretch", key="ask.go.busy" if running else "ask.go")
        with stop:
            stop_button([live] if running else [], key="ask.stop")
        access.notice(Action.LIVE_RUN)
    if clicked:
        started = start([(spec, values)], text, options)
        if started:  # the new run replaces the one shown, and the page redraws with its Stop button
            st.session_state[SHOWN] = started[0].id
            st.query_params["run"] = started[0].id
            st.rerun()
        return
    if run_id is not None:
        show_run(run_id, key="ask")
