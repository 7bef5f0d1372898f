"""Showing one run by its id, wherever it is: live in this server (followed, with its map lit), being written by
another process (followed through the store), or saved (its whole trace). Ask and History both use it."""

from __future__ import annotations

import streamlit as st

from core.engine.call_queue import QUEUE
from core.engine.live_run import LiveRun
from core.engine.methods import get
from core.engine.stages import current_stage
from core.engine.trace import Run
from ui.common import jobs, state
from ui.runs.live_panel import follow, follow_saved, live_box
from ui.runs.method_map import method_map
from ui.runs.trace_view import render_run


def load(run_id: str) -> Run | None:
    return state.store().find_run(run_id)


def _lit_map(live: LiveRun) -> None:
    """The map with the stage the run is in lit: that of a call in flight (waiting, reading its prompt or writing),
    not that of the last step finished (the retrieval before the agents that read it)."""
    with st.expander("Method map", expanded=True, icon=":material/account_tree:"):
        events, working = list(live.events), [(c.stage, c.agent) for c in QUEUE.standing(live.id)]
        method_map(live.spec, events, lit=current_stage(live.spec.stages, events, working))


def _saved_map(run: Run, key: str) -> None:
    spec = get(run.method)
    lit = current_stage(spec.stages, run.events) if run.status == "running" else None
    with st.expander("Method map", expanded=run.status == "running", icon=":material/account_tree:"):
        method_map(spec, run.events, lit=lit, key=key)


def show_run(
    run_id: str, *, key: str, stop: bool = False, show_question: bool = False, going: bool = False
) -> Run | None:
    """Draws the run; returns it once it has ended (None while it goes, or if no run has this id).

    ``going``: the caller has drawn the run as still going (its Stop), so it is followed even if it ended since; the
    follower's first look then reruns the page, which draws it ended everywhere (else a Stop would stay for good)."""
    live = jobs.live(run_id)
    if live is not None and (going or not live.done):
        if stop:
            jobs.stop_button([live], key=f"{key}.stop")
        follow([live.id], draw_extra=lambda lives: [_lit_map(one) for one in lives])
        st.caption(f"Run {live.id} is saved as it goes; reopen it any time in History.")
        return None
    run = live.run if live is not None else load(run_id)
    if run is None:
        st.warning(f"No saved run has the id “{run_id}”. It may have been deleted; History lists every saved run.")
        return None
    if live is not None:
        live_box(live)
    if run.status == "running":
        _saved_map(run, key)
        follow_saved(run.id, lambda i: load(i) or run)
        return None
    _saved_map(run, key)
    render_run(run, key=key, show_question=show_question)
    st.caption(f"Saved as run {run.id}; reopen it any time in History.")
    return run
