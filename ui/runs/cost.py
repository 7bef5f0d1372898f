"""What each step of a run cost: a table per step and a Plotly chart of time and tokens by stage."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from core.engine.trace import Event, Usage, wall_seconds

TEAL, AMBER, SLATE = "#0f766e", "#f59e0b", "#94a3b8"


def wall_usage(events: list[Event]) -> Usage:
    """The events' usage summed, with their wall seconds (concurrent calls overlap) instead of summed ones."""
    return sum((e.usage for e in events), Usage()).model_copy(update={"seconds": wall_seconds(events)})


def stage_usage(events: list[Event]) -> dict[str, Usage]:
    """``wall_usage`` by stage, stages in order of first appearance; stages that cost nothing are left out."""
    groups: dict[str, list[Event]] = {}
    for event in events:
        if event.usage.calls or event.usage.retrievals:
            groups.setdefault(event.stage, []).append(event)
    return {stage: wall_usage(group) for stage, group in groups.items()}


def cost_figure(events: list[Event]) -> go.Figure:
    by_stage = stage_usage(events)
    names = list(by_stage)
    fig = make_subplots(
        rows=1, cols=2, subplot_titles=("Wall seconds by stage", "Tokens by stage"), horizontal_spacing=0.12
    )
    fig.add_bar(x=names, y=[u.seconds for u in by_stage.values()], name="seconds", marker_color=TEAL, row=1, col=1)
    fig.add_bar(
        x=names, y=[u.prompt_tokens for u in by_stage.values()], name="prompt tokens", marker_color=SLATE, row=1, col=2
    )
    fig.add_bar(
        x=names,
        y=[u.completion_tokens for u in by_stage.values()],
        name="completion tokens",
        marker_color=AMBER,
        row=1,
        col=2,
    )
    fig.update_layout(
        barmode="stack", height=320, margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.25)
    )
    return fig


def step_rows(events: list[Event]) -> list[dict]:
    return [
        {
            "#": e.seq,
            "stage": e.stage,
            "agent": e.agent,
            "kind": e.kind,
            "calls": e.usage.calls,
            "retrievals": e.usage.retrievals,
            "prompt tokens": e.usage.prompt_tokens,
            "completion tokens": e.usage.completion_tokens,
            "seconds": e.usage.seconds,
            "cached": e.usage.cached,
        }
        for e in events
        if e.usage.calls or e.usage.retrievals
    ]


def render_cost(events: list[Event], *, key: str) -> None:
    rows = step_rows(events)
    if not rows:
        st.caption("No step of this run called the model or the retriever.")
        return
    st.caption(
        "The chart shows each stage's wall time; the table, each step's own seconds (steps a method runs "
        "in parallel overlap, so a stage's steps can add up to more than its wall time)."
    )
    st.plotly_chart(cost_figure(events), key=f"cost-chart-{key}", config={"displayModeBar": False})
    st.dataframe(rows, hide_index=True, key=f"cost-table-{key}")
