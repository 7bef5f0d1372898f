"""Ask: one method on one question; its steps appear live, then the whole trace."""

from __future__ import annotations

import streamlit as st

from ui import state
from ui.chrome import header
from ui.knobs import knob_inputs, method_picker
from ui.launch import start
from ui.live import LiveRun, follow
from ui.question_form import case_for, question_form
from ui.text import md
from ui.trace_view import render_run

LIVE = "ask.live"


def _teaching_key(live: LiveRun) -> None:
    """For a teaching-pack case: the pack's answer and teaching note next to the method's answer."""
    case = case_for(live.question.text, st.session_state.get("ask.case"))
    answer = live.run.answer
    if case is None or answer is None:
        return
    same = "the same as" if answer.choice == case.answer else "not the same as"
    with st.expander(f"Teaching pack answer ({same} the method's): open to reveal", icon=":material/school:"):
        st.markdown(f"**{md(case.answer)}\\.** {md(case.options[case.answer])}")
        st.markdown(md(case.teaching_note))


def page() -> None:
    header("Ask", "Pick a method and ask a question: each step appears as it happens, then the whole trace.")
    live: LiveRun | None = st.session_state.get(LIVE)
    running = live is not None and not live.done
    setup, ask = st.columns([1, 2], gap="large")
    with setup:
        spec = method_picker("ask.method")
        with st.expander("Knobs", expanded=False):
            values = knob_inputs(spec, key="ask.knobs", defaults=state.knob_defaults(spec.name))
    with ask:
        text, options = question_form("ask")
        go, stop = st.columns([1, 1])
        clicked = go.button("Run", type="primary", icon=":material/play_arrow:", disabled=running,
                            width="stretch")
        if running and stop.button("Stop", icon=":material/stop:", width="stretch"):
            live.cancel()
    if clicked:
        started = start([(spec, values)], text, options)
        if started:
            live = st.session_state[LIVE] = started[0]
    if live is None:
        return
    follow([live], [st.container()])
    _teaching_key(live)
    render_run(live.run, key="ask")
    st.caption(f"Saved as run {live.run.id}; reopen it any time in History.")
