"""The Benchmark page's Plotly figures, drawn from the same summary and paired tests the command line prints:
accuracy per arm × dataset with Wilson intervals, accuracy against a cost with the Pareto front marked, and
the McNemar matrix."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import plotly.graph_objects as go

from core.studio.eval.report import ALL
from core.studio.eval.stats import ALPHA, Paired, pareto_front

Label = Callable[[str], str]
COSTS = {
    "tokens": ("mean_tokens", "tokens per question"),
    "LLM calls": ("mean_calls", "LLM calls per question"),
    "seconds": ("mean_seconds", "seconds per question"),
}
PALETTE = ["#0f766e", "#f59e0b", "#7c3aed", "#dc2626", "#2563eb", "#65a30d", "#db2777", "#0891b2", "#92400e", "#475569"]
FRONT, OFF_FRONT = "#0f766e", "#94a3b8"


def _errors(lines: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(
        type="data",
        symmetric=False,
        array=[s["ci_high"] - s["accuracy"] for s in lines],
        arrayminus=[s["accuracy"] - s["ci_low"] for s in lines],
        thickness=1.5,
        width=5,
    )


def _layout(fig: go.Figure, height: int, **more: Any) -> go.Figure:
    fig.update_layout(
        height=height,
        margin=dict(l=10, r=10, t=30, b=10),
        plot_bgcolor="#ffffff",
        legend=dict(orientation="h", y=-0.18),
        **more,
    )
    return fig


def accuracy_figure(summary: list[dict[str, Any]], label: Label) -> go.Figure:
    """A point per arm and dataset with its 95% interval; arms side by side within each dataset."""
    fig = go.Figure()
    for i, arm in enumerate(dict.fromkeys(s["arm"] for s in summary)):
        lines = [s for s in summary if s["arm"] == arm]
        fig.add_scatter(
            x=[s["dataset"] for s in lines],
            y=[s["accuracy"] for s in lines],
            mode="markers",
            name=label(arm),
            error_y=_errors(lines),
            marker=dict(size=10, color=PALETTE[i % len(PALETTE)]),
            customdata=[[s["correct"], s["n"], s["ci_low"], s["ci_high"], s["errors"]] for s in lines],
            hovertemplate=f"<b>{label(arm)}</b> · %{{x}}<br>accuracy %{{y:.1%}} (%{{customdata[0]}}/"
            "%{customdata[1]})<br>95% CI %{customdata[2]:.1%}–%{customdata[3]:.1%}<br>"
            "errors %{customdata[4]}<extra></extra>",
        )
    fig.update_yaxes(title="accuracy (95% Wilson CI)", tickformat=".0%", range=[0, 1.02], gridcolor="#e5e7eb")
    fig.update_xaxes(title=None)
    return _layout(fig, 380, scattermode="group", scattergap=0.5)


def cost_figure(summary: list[dict[str, Any]], label: Label, cost: str, dataset: str = ALL) -> go.Figure:
    """Accuracy against a mean cost per question; arms that no other arm beats on both are joined as the front."""
    field, title = COSTS[cost]
    return front_figure([s for s in summary if s["dataset"] == dataset] or summary, label, field, title)


def _x_errors(lines: list[dict[str, Any]], field: str) -> dict[str, Any] | None:
    """Horizontal bars where the lines carry an interval of their cost (``<field>_low``/``_high``)."""
    if not any(s.get(f"{field}_low") is not None for s in lines):
        return None
    low = [s[field] - s[f"{field}_low"] if s.get(f"{field}_low") is not None else 0 for s in lines]
    high = [s[f"{field}_high"] - s[field] if s.get(f"{field}_high") is not None else 0 for s in lines]
    return dict(type="data", symmetric=False, array=high, arrayminus=low, thickness=1.5, width=5)


def front_figure(
    lines: list[dict[str, Any]], label: Label, field: str, title: str, x_format: str = ",.1f"
) -> go.Figure:
    """One point per line at (its ``field``, its accuracy), with the Pareto front joined."""
    points = {s["arm"]: (s[field], s["accuracy"]) for s in lines}
    front = pareto_front(points)
    fig = go.Figure()
    edge = sorted((points[a] for a in front), key=lambda p: p[0])
    fig.add_scatter(
        x=[p[0] for p in edge],
        y=[p[1] for p in edge],
        mode="lines",
        name="Pareto front",
        line=dict(color=FRONT, dash="dot", width=2),
        hoverinfo="skip",
    )
    for on in (True, False):
        chosen = [s for s in lines if (s["arm"] in front) == on]
        if not chosen:
            continue
        fig.add_scatter(
            x=[s[field] for s in chosen],
            y=[s["accuracy"] for s in chosen],
            mode="markers+text",
            name="on the front" if on else "beaten on both",
            text=[label(s["arm"]) for s in chosen],
            textposition="top center",
            error_y=_errors(chosen),
            error_x=_x_errors(chosen, field),
            marker=dict(size=12 if on else 9, symbol="diamond" if on else "circle", color=FRONT if on else OFF_FRONT),
            hovertemplate=f"%{{text}}<br>{title} %{{x:{x_format}}}<br>accuracy %{{y:.1%}}<extra></extra>",
        )
    fig.update_yaxes(title="accuracy (95% Wilson CI)", tickformat=".0%", range=[0, 1.05], gridcolor="#e5e7eb")
    fig.update_xaxes(title=title, gridcolor="#e5e7eb", rangemode="tozero")
    return _layout(fig, 420)


def mcnemar_figure(found: list[Paired], arms: list[str], label: Label) -> go.Figure:
    """Arms × arms: colour is the McNemar p-value (dark where p < 0.05); each cell says p, b/c and agreement."""
    index = {a: i for i, a in enumerate(arms)}
    n = len(arms)
    z: list[list[float | None]] = [[None] * n for _ in range(n)]
    text = [["" for _ in range(n)] for _ in range(n)]
    for p in found:
        i, j = index[p.first], index[p.second]
        z[i][j] = z[j][i] = p.p
        text[i][j] = f"p = {p.p:.2f}<br>b/c {p.b}/{p.c}<br>agree {p.agreement:.0%}<br>n = {p.n}"
        text[j][i] = f"p = {p.p:.2f}<br>b/c {p.c}/{p.b}<br>agree {p.agreement:.0%}<br>n = {p.n}"
    names = [label(a) for a in arms]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=names,
            y=names,
            text=text,
            texttemplate="%{text}",
            textfont=dict(size=11),
            zmin=0,
            zmax=1,
            colorscale=[[0, "#0f766e"], [ALPHA, "#5eead4"], [ALPHA + 1e-9, "#e5e7eb"], [1, "#f8fafc"]],
            colorbar=dict(title="p", tickvals=[0, ALPHA, 0.5, 1]),
            hoverongaps=False,
            hovertemplate="%{y} vs %{x}<br>%{text}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, 140 + 70 * n)
