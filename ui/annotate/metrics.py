"""Per-method retrieval metrics from the labels: a table and a Plotly chart of means with 95% intervals, the
paired comparisons that say whether the data separate two methods, and every run's figures as CSV."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from core.studio.labels import GRADES, PoolQuestion
from core.studio.labels.metrics import (
    MetricSettings,
    compare_methods,
    questions_by_method,
    run_metrics,
    shared_only,
    summarize,
    to_csv,
)
from ui.common import keys
from ui.common.annotator import label_store
from ui.common.knobs import method_label

CONSENSUS = "Adjudicated, else majority"


def settings_form(annotators: list[str]) -> MetricSettings:
    k, relevant, source, generated = st.columns([1, 1.4, 1.6, 1.4], vertical_alignment="bottom")
    chosen_k = k.number_input("k for P@k", min_value=1, max_value=50, value=5, key="annotate.k")
    threshold = relevant.selectbox(
        "Relevant from grade",
        [1, 2, 3],
        index=1,
        key=keys.ANNOTATE_RELEVANT,
        format_func=lambda g: f"{g} ({GRADES[g]}) and up",
    )
    who = source.selectbox("Labels", [CONSENSUS, *annotators], key="annotate.metric_labels")
    with_generated = generated.checkbox(
        "Score generated documents too",
        key="annotate.generated",
        help="after the retrieved ones, in the order the method wrote them",
    )
    return MetricSettings(
        k=int(chosen_k), relevant=int(threshold), generated=with_generated, annotator=None if who == CONSENSUS else who
    )


def _figure(summary: list[dict]) -> go.Figure:
    figure = go.Figure()
    for method in sorted({s["method"] for s in summary}):
        rows = [s for s in summary if s["method"] == method]
        figure.add_bar(
            name=method_label(method),
            x=[r["measure"] for r in rows],
            y=[r["mean"] for r in rows],
            error_y={
                "type": "data",
                "symmetric": False,
                "visible": any(r["low"] is not None for r in rows),
                "array": [(r["high"] - r["mean"]) if r["low"] is not None else 0 for r in rows],
                "arrayminus": [(r["mean"] - r["low"]) if r["low"] is not None else 0 for r in rows],
            },
            customdata=[r["n_questions"] for r in rows],
            hovertemplate="%{x}: %{y:.2f} (n=%{customdata} questions)<extra>" + method + "</extra>",
        )
    figure.update_layout(
        barmode="group",
        height=380,
        margin={"t": 30, "b": 10, "l": 10, "r": 10},
        yaxis={"range": [0, 1.05], "title": "mean over questions"},
        legend={"orientation": "h"},
    )
    return figure


def _same_questions(rows: list[dict]) -> list[dict]:
    """Says when the methods were scored on different questions, and offers the questions they share: among all of
    them, or among the methods chosen (one judged on other questions can be left out)."""
    by_method = questions_by_method(rows)
    if len({frozenset(q) for q in by_method.values()}) <= 1:
        return rows
    each = ", ".join(f"{method_label(m)} {len(q)}" for m, q in sorted(by_method.items()))
    shared_by_all = set.intersection(*by_method.values())
    st.warning(
        f"The methods were judged on different questions ({each}; {len(shared_by_all)} shared by all), so "
        "their means below are over different questions and do not compare like for like.",
        icon=":material/rule:",
    )
    left, right = st.columns([3, 2], vertical_alignment="bottom")
    chosen = left.multiselect(
        "Methods to compare",
        sorted(by_method),
        default=sorted(by_method),
        format_func=method_label,
        key="annotate.metric_methods",
    )
    shared = set.intersection(*(by_method[m] for m in chosen)) if chosen else set()
    rows = [r for r in rows if r["method"] in chosen]
    if right.toggle(
        f"Shared questions only ({len(shared)})",
        key="annotate.shared_only",
        disabled=not shared,
        help="The chosen methods scored on the same questions: those every one of them has judged runs on",
    ):
        return shared_only(rows)
    return rows


def metrics_view(questions: list[PoolQuestion], settings: MetricSettings) -> None:
    store = label_store()
    ids = [q.question_id for q in questions]
    rows = run_metrics(questions, store.labels(ids), store.finals(ids), settings)
    if not rows:
        st.info("No run in this queue has a judged snippet yet: judge some passages first.")
        return
    rows = _same_questions(rows)
    if not rows:
        st.info("Choose at least one method to compare.")
        return
    names = [m for m in settings.names() if not m.startswith("judged")]
    summary = summarize(rows, [*names, "judged_share"])
    scored = len({r["question_id"] for r in rows})
    st.markdown(
        f"**{len(rows)} run{'s' if len(rows) != 1 else ''} scored** over {scored} "
        f"question{'s' if scored != 1 else ''}; relevant = "
        f"grade {settings.relevant}+; unjudged snippets count as not relevant. Each question weighs the same; "
        "intervals are 95% t-intervals over questions (none below two)."
    )
    st.plotly_chart(_figure([s for s in summary if s["measure"] in names]), key="annotate.metrics_chart")
    st.dataframe(
        [
            {
                "method": method_label(s["method"]),
                "measure": s["measure"].replace("judged_share", "judged share"),
                "mean": round(s["mean"], 3),
                "95% interval": _interval(s["low"], s["high"], ".2f"),
                "questions": s["n_questions"],
                "runs": s["n_runs"],
            }
            for s in summary
        ],
        hide_index=True,
        key="annotate.summary",
    )
    pairs = [c for m in names for c in compare_methods(rows, m) if c["n_questions"]]
    if pairs:
        st.markdown("**Methods compared on the questions both ran** (mean paired difference, 95% interval):")
        st.dataframe(
            [
                {
                    "measure": c["measure"],
                    "pair": f"{method_label(c['first'])} − {method_label(c['second'])}",
                    "difference": round(c["mean_difference"], 3),
                    "95% interval": _interval(c["low"], c["high"], "+.2f"),
                    "questions": c["n_questions"],
                    "verdict": c["verdict"],
                }
                for c in pairs
            ],
            hide_index=True,
            key="annotate.pairs",
        )
    files = (
        ("Per-run metrics", rows, "per_run", "metrics_csv"),
        ("Per-method summary", summary, "per_method", "summary_csv"),
    )
    for column, (title, table, name, key) in zip(st.columns(2), files):
        column.download_button(
            f"{title} (CSV)",
            to_csv(table),
            f"metrics_{name}.csv",
            "text/csv",
            icon=":material/download:",
            key=f"annotate.{key}",
        )


def _interval(low: float | None, high: float | None, spec: str) -> str:
    """A 95% interval as the tables write it, or why there is none."""
    return f"{low:{spec}} to {high:{spec}}" if low is not None else "— (n<2)"
