"""Replay on screen: the runs of a replay at one step, drawn with the trace view a live run uses, and the
player that steps through them (previous / next, jump to a stage, autoplay at the original pacing)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import streamlit as st

from core.engine.methods import registry
from core.engine.stages import current_stage
from core.engine.trace import Event
from core.studio.workshop.replay import Replay
from ui.common import keys
from ui.common.knobs import method_label
from ui.common.text import md
from ui.runs.evidence_view import highlight_for, render_claims
from ui.runs.method_map import method_map
from ui.runs.outcome import render_outcome
from ui.runs.snippet_cards import Evidence
from ui.runs.teaching_view import marks_for
from ui.runs.trace_view import render_timeline

SPEEDS = {"×1": 1.0, "×4": 4.0, "instant": 0.0}
TICK_SECONDS = 0.5  # how often autoplay looks whether the next step is due
STYLE = """<style>
[class*="st-key-ws-new-"] { border-left: 4px solid #0f766e; background: #f3fbf9; padding: 0.4rem 0.7rem;
  border-radius: 0.4rem; }
[class*="st-key-ws-wait-"] { color: #6b7b88; }
.room-code { font-size: 1.4rem; }
.room-code b { font-size: clamp(1.5rem, 2.3vw, 2.4rem); letter-spacing: 0.15em; white-space: nowrap; color: #0f3d3a; }
</style>"""


@dataclass
class Player:
    """One person's place in a replay (kept in their session)."""

    runs: tuple[str, ...]
    step: int = 0
    playing: bool = False
    speed: str = "×1"
    due: float = 0.0  # when autoplay shows the next step


def player(key: str, replay: Replay) -> Player:
    ids = tuple(r.id for r in replay.runs)
    found = st.session_state.get(key)
    if not isinstance(found, Player) or found.runs != ids:
        found = st.session_state[key] = Player(ids)
    return found


def _pace(replay: Replay, step: int, speed: str) -> float:
    """Seconds to wait before ``step`` at this speed (its original delay, ×4 faster, or none)."""
    factor = SPEEDS[speed]
    return replay.steps[min(step, replay.last)].delay / factor if factor else 0.0


def tick(replay: Replay, p: Player) -> bool:
    """Autoplay: show the next step when it is due, stopping before the reveal. True when the step changed."""
    if not p.playing or time.time() < p.due:
        return False
    if p.step >= replay.last - 1:
        p.playing = False
        return False
    p.step += 1
    p.due = time.time() + _pace(replay, p.step + 1, p.speed)
    return True


def _go(p: Player, step: int, replay: Replay) -> None:
    p.step = max(0, min(step, replay.last))
    p.playing = False


def _toggle(p: Player, replay: Replay) -> None:
    p.playing = not p.playing
    if p.playing:
        if p.step >= replay.last - 1:
            p.step = 0
        p.due = time.time() + _pace(replay, p.step + 1, p.speed)


def _jump(key: str, p: Player, replay: Replay) -> None:
    label = st.session_state.get(keys.replay_jump(key))
    starts = dict(replay.stage_starts())
    if label in starts:
        _go(p, starts[label], replay)
    st.session_state[keys.replay_jump(key)] = None


def _speed(key: str, p: Player) -> None:
    p.speed = st.session_state.get(keys.replay_speed(key)) or "×1"


def controls(replay: Replay, p: Player, key: str) -> None:
    """The player's buttons; a change of play/pause reruns the page so autoplay's timer starts or stops."""
    # two rows, so the labels fit beside a room panel and at 1024 px
    back, play, forward = st.columns([1, 1, 1.4], vertical_alignment="bottom")
    speed, jump = st.columns([1, 1], vertical_alignment="bottom")
    back.button(
        "Previous",
        icon=":material/skip_previous:",
        key=f"{key}.prev",
        disabled=p.step == 0,
        on_click=_go,
        args=(p, p.step - 1, replay),
        width="stretch",
    )
    if play.button(
        "Pause" if p.playing else "Play",
        icon=":material/pause:" if p.playing else ":material/play_arrow:",
        key=f"{key}.play",
        on_click=_toggle,
        args=(p, replay),
        width="stretch",
        help="Autoplay at the original pacing; it stops before the reveal",
    ):
        st.rerun()
    reveal_next = p.step == replay.last - 1
    forward.button(
        "Reveal the answer" if reveal_next else "Next",
        key=f"{key}.next",
        icon=":material/visibility:" if reveal_next else ":material/skip_next:",
        type="primary" if reveal_next else "secondary",
        disabled=p.step >= replay.last,
        on_click=_go,
        args=(p, p.step + 1, replay),
        width="stretch",
    )
    st.session_state.setdefault(keys.replay_speed(key), p.speed)
    speed.segmented_control("Speed", list(SPEEDS), key=keys.replay_speed(key), on_change=_speed, args=(key, p))
    jump.selectbox(
        "Jump to stage",
        [label for label, _ in replay.stage_starts()],
        index=None,
        key=keys.replay_jump(key),
        placeholder="Jump to stage…",
        on_change=_jump,
        args=(key, p, replay),
    )
    progress_line(replay, p.step)


def progress_line(replay: Replay, step: int) -> None:
    here = replay.steps[step]
    st.progress(
        step / max(replay.last, 1),
        text=f"Step {step} of {replay.last} · {here.label}" + (" · revealed" if here.reveal else ""),
    )


def _column(replay: Replay, step: int, index: int, key: str, earlier: bool) -> None:
    run = replay.runs[index]
    shown = replay.events(step, index)
    # teaching-pack passages carry their marks, as in a live run
    evidence = Evidence.of(shown, marks_for(run), run.method)
    new: list[Event] = [e for i, e in replay.new_events(step) if i == index]
    spec = registry().get(run.method)
    st.markdown(f"#### {md(method_label(run.method))}")
    if spec is not None:
        method_map(spec, shown, lit=current_stage(spec.stages, shown) if shown else None, key=f"{key}-{index}")
    if replay.steps[step].reveal:
        evidence.highlight = highlight_for(run, f"{key}-{index}")
        render_outcome(run, evidence, key=f"{key}-{index}")
        render_claims(run, evidence.highlight, f"{key}-{index}")
    if new:
        with st.container(key=f"ws-new-{key}-{index}"):
            st.caption("This step")
            render_timeline(new, evidence)
    elif step:
        with st.container(key=f"ws-wait-{key}-{index}"):
            st.caption("No step of this stage: waiting for the others.")
    before = shown[: len(shown) - len(new)]
    if before:
        st.caption(f"Earlier steps · {len(before)} events" + ("" if earlier else " (not shown)"))
        if earlier:
            render_timeline(before, evidence, key=f"{key}-{index}")


def question(replay: Replay) -> None:
    """The replay's question and options, with the style its steps are drawn in (the same at every step)."""
    st.html(STYLE)
    run = replay.runs[0]
    st.markdown(f"**Question:** {md(run.question)}")
    if run.options:
        st.markdown("\n".join(f"- {md(k)}\\. {md(v)}" for k, v in run.options.items()))


def show(replay: Replay, step: int, key: str, earlier: bool = True, *, with_question: bool = True) -> None:
    """Every run of the replay at ``step``, side by side, the newest events first and highlighted; the earlier
    steps' events below them unless ``earlier`` is off; the question above them unless the page drew it already."""
    if with_question:
        question(replay)
    if step == 0:
        st.info(
            "Step 0: only the question. Predict what the method will answer, then step through its work.",
            icon=":material/psychology_alt:",
        )
    columns = st.columns(len(replay.runs), gap="medium") if len(replay.runs) > 1 else [st.container()]
    for index, column in enumerate(columns):
        with column:
            _column(replay, step, index, key, earlier)
