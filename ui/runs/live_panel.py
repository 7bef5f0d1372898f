"""Following runs while they go: a box per run with its steps so far, redrawn by a fragment every second.

The page script itself never waits for a run, so it ends at once: the page's buttons show the run's state from
the first second, and nothing of an earlier run lingers on screen. When every followed run has ended, the fragment
reruns the whole page, which then draws the finished traces.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import streamlit as st

from core.engine.call_queue import QUEUE, Standing
from core.engine.live_run import LiveRun
from core.engine.methods import get
from core.engine.partial_reply import partial_fields
from core.engine.trace import Event, Partial, Run
from ui.common import jobs
from ui.common.text import md
from ui.runs.pace import busy_notice, during_run, expected, pack_pointer
from ui.runs.reply_fields import reply_fields
from ui.runs.step_lines import step_line

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
        return (
            f"{label}: failed after {seconds}"
            if run is None or run.status == "error"
            else f"{label}: interrupted after {seconds}"
        )
    if run.status == "cancelled":
        return f"{label}: stopped after {seconds}"
    t = run.totals
    done_how = "served from the cache" if t.cached else "done"
    return f"{label}: {done_how} in {seconds} · {_count(t.calls, 'call')} · {t.tokens:,} tokens"


def status_box(label: str, state: str, *, expanded: bool):
    """A status box that keeps the state it is given. Streamlit's ``with st.status(...)`` marks a box still
    "running" complete when its block ends (a tick on a run that is still going), so the block writes into a
    container inside the box instead."""
    return st.status(label, state=state, expanded=expanded).container()


def _state(run: Run | None, done: bool) -> str:
    if not done:
        return "running"
    return "complete" if run is not None and run.status == "ok" else "error"


def writing_now(partials: list[Partial]) -> str:
    """Who is writing and for how long, e.g. 'E-Agent writing for 12 s'."""
    now = time.time()
    return ", ".join(f"{p.agent} writing for {now - p.started:.0f} s" for p in partials)


DONE_ICON, FAILED_ICON = ":material/check_circle:", ":red[:material/error:]"
STATE_ICONS = {"waiting": ":material/hourglass_top:", "reading": ":material/menu_book:", "writing": ":material/edit:"}


def done_line(event: Event) -> str:
    """A finished step, its icon saying so (an error is not a tick)."""
    return f"{FAILED_ICON if event.kind == 'error' else DONE_ICON} {step_line(event)}"


def pending_line(call: Standing) -> str:
    """A call still in flight that has written nothing yet: waiting behind other runs, or reading its prompt."""
    return (
        f"{STATE_ICONS[call.state]} **{md(call.agent)}** :gray[{md(call.stage)}] — {md(call.line())} "
        f":gray[· {time.time() - call.since:.0f} s]"
    )


def partial_reply(partial: Partial) -> None:
    """A reply as far as it is written: its fields when it is JSON (none yet while the first key is written, never
    the raw opening brace), else its text."""
    with st.container(border=True, key=f"writing-{partial.agent}-{partial.started}"):
        st.markdown(
            f"{STATE_ICONS['writing']} :orange-badge[writing] **{md(partial.agent)}** :gray[{md(partial.role)} · "
            f"{md(partial.stage)} · {time.time() - partial.started:.0f} s]"
        )
        fields = partial_fields(partial.text)
        if fields:
            reply_fields(fields)
        elif fields is not None or not partial.text.strip():
            st.markdown(":gray[starting its reply…]")
        else:
            st.markdown(md(partial.text))


def live_box(live: LiveRun) -> None:
    """One run's box: its label says what it is doing; inside, one readable line per step so far, then each reply
    being written, field by field."""
    events, working = list(live.events), live.working()
    pending = [c for c in QUEUE.standing(live.id) if c.state != "writing"] if not live.done else []
    label = status_label(live.spec.label, live.run, events, live.done, live.elapsed)
    if working and not live.done:
        label = f"{live.spec.label}: running · now {writing_now(working)} · {live.elapsed:.0f} s"
    elif pending:
        label = f"{live.spec.label}: {pending[0].agent} {pending[0].line()} · {live.elapsed:.0f} s"
    if live.stop_requested and not live.done:
        label = f"{live.spec.label}: stopping · {live.elapsed:.0f} s"
    with status_box(label, _state(live.run, live.done), expanded=not live.done):
        if not live.done and (pace := during_run(live)):
            st.caption(f":material/speed: {pace}")
        for event in events:
            st.markdown(done_line(event))
        for call in pending:
            st.markdown(pending_line(call))
        for partial in working if not live.done else []:
            partial_reply(partial)
        if not events and not working and not pending and not live.done:
            st.caption("The first step is under way.")


def saved_box(run: Run) -> None:
    """A run another process is writing, followed through the store."""
    quiet = time.time() - (run.events[-1].time if run.events else run.started)
    label = status_label(get(run.method).label, run, run.events, False, time.time() - run.started)
    with status_box(f"{label} · last step {quiet:.0f} s ago", "running", expanded=True):
        st.caption(
            "Started by another process (the command line, or another server); followed here through the "
            "store. Stop it where it was started."
        )
        for event in run.events:
            st.markdown(done_line(event))


def follow(run_ids: list[str], *, draw_extra: Callable[[list[LiveRun]], None] | None = None) -> None:
    """Boxes for this server's live runs, side by side, redrawn every second until all have ended."""

    @st.fragment(run_every=REFRESH_SECONDS)
    def panel() -> None:
        lives = [live for live in map(jobs.live, run_ids) if live is not None]
        busy_notice()
        for live in lives:
            if not live.done and (found := expected(live.spec.name, live.llm)) is not None and found.long:
                pack_pointer(live.spec)
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
