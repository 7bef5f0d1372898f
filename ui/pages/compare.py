"""Compare: two or three methods on the same question, run at the same time, side by side by phase."""

from __future__ import annotations

import streamlit as st

from core.methods import registry
from core.trace import Run
from ui import state
from ui.chrome import header
from ui.knobs import knob_inputs, method_label
from ui.launch import start
from ui.live import LiveRun, follow
from ui.question_form import question_form
from ui.text import md, short
from ui.trace_view import Evidence, render_outcome, render_run, render_timeline

LIVES = "compare.lives"
# Rows of the side-by-side view: every method's events of these kinds, so like steps line up.
PHASES = (
    ("What the agents said", ("agent_message",)),
    ("Queries, retrieval and generated documents", ("query", "retrieval", "generated_doc")),
    ("Checks: sufficiency, verdicts, reports", ("sufficiency", "verdict", "report")),
)


def agreement(runs: list[Run]) -> str:
    """One line: do the answers agree, and who answered what."""
    answered = [r for r in runs if r.answer is not None]
    if len(answered) < 2:
        return "Fewer than two methods gave an answer, so there is nothing to compare."
    keys = {r.id: (r.answer.choice or " ".join(r.answer.text.lower().split())) for r in answered}
    groups: dict[str, list[str]] = {}
    for r in answered:
        groups.setdefault(keys[r.id], []).append(method_label(r.method))
    if len(groups) == 1:
        choice = answered[0].answer.choice
        same = f": **{md(choice)}**." if choice else "."
        return f":green-badge[agree] All {len(answered)} answers are the same{same}"
    if not answered[0].answer.choice:
        return ":orange-badge[differ] The free-text answers differ in wording; read them side by side below."
    split = " · ".join(f"**{md(k)}** ({', '.join(v)})" for k, v in groups.items())
    return f":red-badge[disagree] {split}"


def _answer(run: Run) -> str:
    if run.answer is None:
        return "—"
    return (f"{run.answer.choice}. " if run.answer.choice else "") + short(run.answer.text, 80)


def summary(runs: list[Run]) -> None:
    st.markdown(agreement(runs))
    st.dataframe([{
        "method": method_label(r.method),
        "status": r.status,
        "answer": _answer(r),
        "LLM calls": r.totals.calls, "retrievals": r.totals.retrievals, "tokens": r.totals.tokens,
        "seconds": round(r.totals.seconds, 1),
    } for r in runs], hide_index=True, key="compare-summary")


def side_by_side(runs: list[Run]) -> None:
    evidence = [Evidence.of(r.events) for r in runs]
    for title, kinds in PHASES:
        st.markdown(f'<div class="phase-head">{title}</div>', unsafe_allow_html=True)
        for column, run, found in zip(st.columns(len(runs), gap="medium"), runs, evidence):
            with column:
                events = [e for e in run.events if e.kind in kinds]
                if events:
                    render_timeline(events, found)
                else:
                    st.caption("No steps of this kind.")
    st.markdown('<div class="phase-head">Answers and the documents they cite</div>', unsafe_allow_html=True)
    for i, (column, run, found) in enumerate(zip(st.columns(len(runs), gap="medium"), runs, evidence)):
        with column:
            render_outcome(run, found, key=f"compare-{i}")


def page() -> None:
    header("Compare", "Two or three methods on the same question, run at the same time, lined up step by step.")
    methods = registry()
    lives: list[LiveRun] = st.session_state.get(LIVES, [])
    running = any(not live.done for live in lives)
    ask, setup = st.columns([3, 2], gap="large")
    with setup:
        chosen = state.kept(st.multiselect, "Methods (two or three)", key="compare.methods",
                            default=list(methods)[:2], options=list(methods), format_func=lambda n: methods[n].label,
                            max_selections=3)
        values = {}
        for name in chosen:
            spec = methods[name]
            st.caption(f"**{spec.label}**: {spec.description}")
            with st.expander(f"{spec.label} knobs"):
                values[name] = knob_inputs(spec, key="compare.knobs", defaults=state.knob_defaults(name))
    with ask:
        text, options = question_form("compare")
        go, stop = st.columns(2)
        clicked = go.button("Run all", type="primary", icon=":material/play_arrow:", width="stretch",
                            disabled=running or len(chosen) < 2,
                            help="Choose at least two methods" if len(chosen) < 2 else None)
        if running and stop.button("Stop all", icon=":material/stop:", width="stretch"):
            for live in lives:
                live.cancel()
    if clicked:
        started = start([(methods[name], values[name]) for name in chosen], text, options)
        if started:
            lives = st.session_state[LIVES] = started
    if not lives:
        return
    top = st.container()
    follow(lives, st.columns(len(lives), gap="medium"))
    runs = [live.run for live in lives]
    with top:
        summary(runs)
    side_by_side(runs)
    st.subheader("Full traces")
    for i, (tab, run) in enumerate(zip(st.tabs([method_label(r.method) for r in runs]), runs)):
        with tab:
            render_run(run, key=f"compare-full-{i}")
