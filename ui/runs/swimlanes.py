"""Compare as swimlanes: one row per common stage (understand → query → retrieve / generate → judge → answer),
one column per method, each cell a compact summary that opens on the cell's steps."""

from __future__ import annotations

import streamlit as st

from core.engine.methods import get
from core.engine.stages import COMMON, by_common_stage
from core.engine.trace import Event, Run
from ui.common.text import esc, md
from ui.runs.cost import wall_usage
from ui.runs.evidence_view import highlight_for, render_claims
from ui.runs.outcome import render_outcome
from ui.runs.snippet_cards import Evidence
from ui.runs.teaching_view import marks_for
from ui.runs.trace_view import render_timeline

_NOUNS = {
    "agent_message": "message",
    "query": "query",
    "retrieval": "retrieval",
    "generated_doc": "generated doc",
    "verdict": "verdict",
    "sufficiency": "sufficiency round",
    "report": "report",
    "answer": "answer",
    "error": "error",
}


def _plural(n: int, noun: str) -> str:
    if n == 1:
        return f"1 {noun}"
    return f"{n} {noun[:-1] + 'ies' if noun.endswith('y') else noun + 's'}"


def cell_summary(events: list[Event]) -> str:
    """What a method did in one stage, in one or two short lines: who, how many steps of each kind, the cost."""
    if not events:
        return ":gray[— no step here]"
    agents = list(dict.fromkeys(e.agent for e in events))
    kinds: dict[str, int] = {}
    for event in events:
        kinds[event.kind] = kinds.get(event.kind, 0) + 1
    snippets = sum(len(e.payload.hits) for e in events if e.kind == "retrieval")
    steps = ", ".join(_plural(n, _NOUNS[k]) for k, n in kinds.items())
    steps += f" ({snippets} snippets)" if snippets else ""
    usage = wall_usage(events)
    cost = (f"{usage.tokens:,} tokens · " if usage.calls else "") + f"{usage.seconds:.1f} s"
    who = ", ".join(agents[:3]) + (f" +{len(agents) - 3}" if len(agents) > 3 else "")
    return f"**{md(who)}** · {md(steps)}  \n:gray[{cost}]"


def swimlanes(runs: list[Run], *, key: str) -> None:
    evidence = [Evidence.of(r.events, marks_for(r), r.method) for r in runs]
    for i, run in enumerate(runs):
        evidence[i].highlight = highlight_for(run, f"{key}-{i}")
    lanes = [by_common_stage(get(r.method).stages, r.events) for r in runs]
    for column, run in zip(st.columns(len(runs), gap="small"), runs):
        column.markdown(f'<div class="lane-method">{esc(get(run.method).label)}</div>', unsafe_allow_html=True)
    for stage, title in COMMON.items():
        st.markdown(f'<div class="lane-head">{title}</div>', unsafe_allow_html=True)
        for i, (column, run) in enumerate(zip(st.columns(len(runs), gap="small"), runs)):
            events = lanes[i][stage]
            with column:
                if stage == "answer":
                    render_outcome(run, evidence[i], key=f"{key}-{i}")
                    render_claims(run, evidence[i].highlight, f"{key}-{i}")
                st.markdown(cell_summary(events))
                if events:
                    with st.expander(f"Open the {_plural(len(events), 'step')}"):
                        render_timeline(events, evidence[i])
