"""Following runs while they go: a box per run with its steps so far, redrawn by a fragment every second.

The page script itself never waits for a run, so it ends at once: the page's buttons show the run's state from
the first second, and nothing of an earlier run lingers on screen. When every followed run has ended, the fragment
reruns the whole page, which then draws the finished traces.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st

from core.methods import get
from core.partial_reply import partial_fields
from core.trace import Event, Partial, Run
from ui import access
from ui.live import LiveRun, live_runs
from ui.reply_fields import reply_fields
from ui.step_lines import step_line
from ui.text import md

REFRESH_SECONDS = 1.0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def status_label(label: str, run: Run | None, events: list[Event], done: bool, elapsed: float) -> str:
    seconds = f"{elapsed:.0f} s"
    if not done:
        last = events[-1] if events else None
        doing = f"after {last.stage} · {last.agent}" if last else "starting its first step"
        return f"{label}: running, {doing} · {_count(len(events), 'event')} · {seconds}"
    if run is None or run.status in ("error", "interrupted"):
        return f"{label}: failed after {seconds}" if run is None or run.status == "error" else \
            f"{label}: interrupted after {seconds}"
    if run.status == "cancelled":
        return f"{label}: stopped after {seconds}"
    t = run.totals
    return f"{label}: done in {seconds} · {_count(t.calls, 'call')} · {t.tokens:,} tokens"


def _state(run: Run | None, done: bool) -> str:
    if not done:
        return "running"
    return "complete" if run is not None and run.status == "ok" else "error"


def writing_now(partials: list[Partial]) -> str:
    """Who is writing and for how long, e.g. 'E-Agent writing for 12 s'."""
    now = time.time()
    return ", ".join(f"{p.agent} writing for {now - p.started:.0f} s" for p in partials)


def partial_reply(partial: Partial) -> None:
    """A reply as far as it is written: its fields when it is JSON, else its text."""
    with st.container(border=True, key=f"writing-{partial.agent}-{partial.started}"):
        st.markdown(f":orange-badge[writing] **{md(partial.agent)}** :gray[{md(partial.role)} · {md(partial.stage)} · "
                    f"{time.time() - partial.started:.0f} s]")
        fields = partial_fields(partial.text)
        if fields:
            reply_fields(fields)
        else:
            st.markdown(md(partial.text) if partial.text.strip() else ":gray[reading the prompt…]")


def live_box(live: LiveRun) -> None:
    """One run's box: its label says what it is doing; inside, one readable line per step so far, then each reply
    being written, field by field."""
    events, working = list(live.events), live.working()
    label = status_label(live.spec.label, live.run, events, live.done, live.elapsed)
    if working and not live.done:
        label = f"{live.spec.label}: running · now {writing_now(working)} · {live.elapsed:.0f} s"
    if live.stop_requested and not live.done:
        label = f"{live.spec.label}: stopping · {live.elapsed:.0f} s"
    with st.status(label, state=_state(live.run, live.done), expanded=not live.done):
        for event in events:
            st.markdown(step_line(event))
        for partial in working if not live.done else []:
            partial_reply(partial)
        if not events and not working and not live.done:
            st.caption("The first step is under way.")


def saved_box(run: Run) -> None:
    """A run another process is writing, followed through the store."""
    quiet = time.time() - (run.events[-1].time if run.events else run.started)
    label = status_label(get(run.method).label, run, run.events, False, time.time() - run.started)
    with st.status(f"{label} · last step {quiet:.0f} s ago", state="running", expanded=True):
        st.caption("Started by another process (the command line, or another server); followed here through the "
                   "store. Stop it where it was started.")
        for event in run.events:
            st.markdown(step_line(event))


def follow(run_ids: list[str], *, draw_extra: Callable[[list[LiveRun]], None] | None = None) -> None:
    """Boxes for this server's live runs, side by side, redrawn every second until all have ended."""
    registry = live_runs()

    @st.fragment(run_every=REFRESH_SECONDS)
    def panel() -> None:
        lives = [live for live in map(registry.get, run_ids) if live is not None]
        if draw_extra:
            draw_extra(lives)
        for column, live in zip(st.columns(len(lives), gap="medium") if len(lives) > 1 else [st.container()], lives):
            with column:
                live_box(live)
        if all(live.done for live in lives):
            st.rerun()

    panel()


def follow_saved(run_id: str, load: Callable[[str], Run]) -> None:
    """A run still being written by another process: polled from the store until it ends."""

    @st.fragment(run_every=REFRESH_SECONDS * 2)
    def panel() -> None:
        run = load(run_id)
        if run.status != "running":
            st.rerun()
        saved_box(run)

    panel()


STOP_WAIT_SECONDS = 2.0


def _stop(running: list[LiveRun]) -> None:
    """Cancel, then give the runs a moment to end (most do within a second), so the page that follows draws them
    ended: Run available again, no Stop. A run still ending is picked up by the live panel as before."""
    running = [live for live in running if access.may_manage(live.id)]  # asked again where the stop happens
    for live in running:
        live.cancel()
    deadline = time.monotonic() + STOP_WAIT_SECONDS
    for live in running:
        live.until_done(max(deadline - time.monotonic(), 0.0))


def stop_button(lives: list[LiveRun], *, key: str, label: str = "Stop") -> None:
    """Stop for runs that are going; disabled, saying so, once a stop is on its way."""
    running = [live for live in lives if not live.done and access.may_manage(live.id, say=False)]
    if not running:  # nothing going, or not this visitor's to stop (only the owner stops others' runs)
        return
    stopping = all(live.stop_requested for live in running)
    st.button("Stopping…" if stopping else label, icon=":material/stop:", key=key, width="stretch",
              disabled=stopping, on_click=_stop, args=(running,),
              help=None if stopping else "Ends the run at its next step; what it did so far is kept")
