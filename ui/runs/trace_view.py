"""A run's whole trace: the outcome, the totals, then tabs with the timeline by stage, the evidence and the cost.

The same view serves a live run, a compared one, a saved one, and a replay: ``render_run(run, upto=n)`` draws the
run as it stood after its first ``n`` events.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import streamlit as st

from core.engine.trace import Answer, Event, Run
from ui.common.text import esc
from ui.runs.cost import render_cost, wall_usage
from ui.runs.event_view import is_raw_report, render_event, usage_text
from ui.runs.evidence_view import highlight_for, render_claims
from ui.runs.outcome import render_outcome, render_question, render_totals
from ui.runs.snippet_cards import Evidence, cards, snippet_card
from ui.runs.teaching_view import marks_for, reveal


def stages(events: Iterable[Event]) -> list[tuple[str, list[Event]]]:
    """Events grouped by stage, stages in the order they first appear (parallel steps interleave)."""
    grouped: dict[str, list[Event]] = {}
    for event in events:
        grouped.setdefault(event.stage, []).append(event)
    return list(grouped.items())


def stage_anchor(key: str, stage: str) -> str:
    """The element id of a stage's heading, which the method map links to."""
    return f"{key}-stage-{re.sub(r'[^a-z0-9]+', '-', stage.lower()).strip('-')}"


def stage_cost(events: list[Event]) -> str:
    """The stage's usage with its wall time; when its calls ran at once, their summed seconds too."""
    usage = wall_usage(events)
    summed = sum(e.usage.seconds for e in events)
    cost = usage_text(usage)
    if summed - usage.seconds >= 1:
        cost += f" wall ({summed:.1f} s of calls at once)"
    return cost


def stage_head(name: str, events: list[Event], anchor: str = "") -> None:
    cost = stage_cost(events)
    at = f' id="{esc(anchor)}"' if anchor else ""
    st.markdown(
        f'<div class="stage-head"{at}><span class="name">{esc(name)}</span><span class="cost">{esc(cost)}</span></div>',
        unsafe_allow_html=True,
    )


def render_timeline(events: list[Event], evidence: Evidence, *, key: str = "") -> None:
    for name, group in stages(events):
        stage_head(name, group, stage_anchor(key, name) if key else "")
        for event in group:
            render_event(event, evidence, fold=is_raw_report(event, group))


def render_evidence(evidence: Evidence) -> None:
    """Retrieved and generated documents side by side, with verdicts, citations and teaching marks."""
    if not evidence.hits and not evidence.generated:
        st.caption("This run used no documents.")
        return
    retrieved = [snippet_card(h, evidence) for h in evidence.hits.values()]
    if not evidence.generated:
        st.markdown(f"**Retrieved snippets** · {len(retrieved)}")
        cards(retrieved)
        return
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Retrieved** · {len(retrieved)}")
        cards(retrieved)
    with right:
        st.markdown(f"**Generated** · {len(evidence.generated)}")
        cards([snippet_card(d, evidence) for d in evidence.generated.values()])


def run_upto(run: Run, upto: int | None) -> Run:
    """The run as it stood after its first ``upto`` events: still running, with no answer, until its last."""
    if upto is None or upto >= len(run.events):
        return run
    events = run.events[: max(upto, 0)]
    answer = next((e.payload for e in reversed(events) if isinstance(e.payload, Answer)), None)
    cut = run.model_copy(update={"events": events, "answer": answer, "status": "running", "finished": None})
    end = events[-1].time if events else run.started
    return cut.model_copy(
        update={"totals": cut.compute_totals().model_copy(update={"seconds": round(end - run.started, 3)})}
    )


def render_run(
    run: Run, *, key: str, show_question: bool = False, upto: int | None = None, reveal_answer: bool = True
) -> None:
    run = run_upto(run, upto)
    evidence = Evidence.of(run.events, marks_for(run), run.method)
    evidence.highlight = highlight_for(run, key)
    if show_question:
        render_question(run)
    render_outcome(run, evidence, key)
    render_claims(run, evidence.highlight, key)
    if reveal_answer and run.answer is not None:
        reveal(run)
    render_totals(run)
    trace, docs, cost, labels = st.tabs(
        [
            f"Trace · {len(run.events)} events",
            f"Evidence · {len(evidence.hits)} retrieved, {len(evidence.generated)} generated",
            "Time and tokens",
            "Labels",
        ]
    )
    with trace:
        render_timeline(run.events, evidence, key=key)
    with docs:
        render_evidence(evidence)
    with cost:
        render_cost(run.events, key=key)
    with labels:
        from ui.runs.labels_inline import label_tab  # imported here: it draws cards with this module's functions

        label_tab(run, evidence, key)
