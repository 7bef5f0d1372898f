"""Ask: one method on one question; its steps appear live, then the whole trace.

The run shown is named in the URL (``/ask?run=<id>``), so a reload or a link re-attaches to it: live while it
goes on in this server, else its saved trace. A run shown has its own method, knobs and question at the top,
read-only; "Ask again" opens the form filled with them.
"""

from __future__ import annotations

import streamlit as st

from core.engine.methods import get, registry
from core.engine.trace import Run
from core.studio.access import Action
from ui.common import access, jobs, keys, state
from ui.common.chrome import header
from ui.common.knobs import knob_inputs, method_picker, preset_knobs
from ui.common.links import linked
from ui.runs.display import load, show_run
from ui.runs.header import again_buttons, cached_notice, fresh_knobs, method_block, question_block
from ui.runs.launch import llm_for, runs_go_to, start
from ui.runs.method_map import method_map
from ui.runs.pace import before_run
from ui.runs.question_form import preset_question, question_form


def _new() -> None:
    """Back to the form; the run shown stays in History."""
    st.session_state.pop(keys.ASK_RUN, None)
    st.query_params.pop("run", None)


def _again(run: Run) -> None:
    """The form with the run's method, knobs and question, to change and run."""
    spec = registry().get(run.method)
    if spec is not None:
        state.preset("ask.method", run.method)
        preset_knobs(spec, key=keys.ASK_KNOBS, defaults=state.knob_defaults(spec.name), values=run.params)
    preset_question(keys.ASK_FORM, run.question, run.options)
    _new()


def _show_new(run_id: str) -> None:
    """The run just started replaces what was shown, and the page redraws with its Stop button."""
    st.session_state[keys.ASK_RUN] = run_id
    st.query_params["run"] = run_id
    st.rerun()


def _form() -> None:
    setup, ask = st.columns([1, 2], gap="large")
    with setup:
        spec = method_picker("ask.method")
        with st.expander("Knobs", expanded=False):
            values = knob_inputs(spec, key=keys.ASK_KNOBS, defaults=state.knob_defaults(spec.name))
        with st.expander("Method map", expanded=True, icon=":material/account_tree:"):
            method_map(spec, [])
    may_run = access.current().may(Action.LIVE_RUN)
    with ask:
        text, options = question_form(keys.ASK_FORM)
        st.caption(f"Runs on {runs_go_to(access.current())}.")
        clicked = st.button(
            "Run", type="primary", icon=":material/play_arrow:", width="stretch", key="ask.go", disabled=not may_run
        )
        access.notice(Action.LIVE_RUN)
        before_run([spec], llm_for(access.current()))
    if clicked:
        started = start([(spec, values)], text, options)
        if started:
            _show_new(started[0].id)


def _shown(run: Run) -> None:
    """The run's own method and question, read-only, with Stop while it goes; then the run itself."""
    live = jobs.live(run.id)
    running = live is not None and not live.done
    setup, ask = st.columns([1, 2], gap="large")
    with setup:
        method_block(run)
    with ask:
        question_block(run.question, run.options, key=keys.ASK_FORM)
        again_buttons(key=keys.ASK_FORM, again=lambda: _again(run), new=_new)
        jobs.stop_button([live] if running else [], key="ask.stop")
        may_run = access.current().may(Action.LIVE_RUN)
        if cached_notice([run], key=keys.ASK_FORM, disabled=running or not may_run):
            started = start([(get(run.method), fresh_knobs(run))], run.question, run.options or None, fresh=True)
            if started:
                _show_new(started[0].id)
    show_run(run.id, key=keys.ASK_FORM, going=running)


def page() -> None:
    header("Ask", "Pick a method and ask a question: each step appears as it happens, then the whole trace.")
    run_id = linked("run", keys.ASK_RUN)  # the run named in the URL, else the one this tab last started
    if run_id is None:
        _form()
        return
    live = jobs.live(run_id)
    run = live.run if live is not None and live.run is not None else load(run_id)
    if run is None:
        st.warning(f"No saved run has the id “{run_id}”. It may have been deleted; History lists every saved run.")
        _new()
        _form()
        return
    _shown(run)
