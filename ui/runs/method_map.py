"""A method's pipeline as a small diagram drawn from its own stage list, the stage a run is in lit, each stage
that has events a link to them in the trace below."""

from __future__ import annotations

import textwrap

import streamlit as st

from core.engine.methods.contract import MethodSpec
from core.engine.stages import Stage, stage_of
from core.engine.trace import Event
from ui.runs.trace_view import stage_anchor

LIT, DONE, TODO = ("#0f766e", "#ffffff"), ("#dcefeb", "#0f3d3a"), ("#f6f8f8", "#6b7b88")
EDGE_LABEL_CHARS = 28  # a loop's label beside a narrow map: longer lines run past the drawing's right edge


def _quote(text: str) -> str:
    """A Graphviz string; a line break in ``text`` becomes Graphviz's own (``\\n``)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def map_dot(spec: MethodSpec, events: list[Event], *, lit: Stage | None = None, key: str = "") -> str:
    """Graphviz source: the question, each stage in order (a fallback branching off), loops back, the answer."""
    first_stage: dict[str, str] = {}  # node label -> the first event stage name that belongs to it
    for event in events:
        found = stage_of(spec.stages, event)
        if found is not None:
            first_stage.setdefault(found.label, event.stage)
    # a long pipeline reads top to bottom: left to right it would shrink to illegible at 1024 px
    lines = [
        "digraph {",
        f'rankdir={"LR" if len(spec.stages) <= 2 else "TB"}; bgcolor="transparent"; nodesep=0.25; ranksep=0.3;',
        'node [shape=box, style="rounded,filled", fontname="sans-serif", fontsize=11, penwidth=1.2, '
        'color="#9fb3b0", margin="0.12,0.06"];',
        'edge [color="#6b7b88", arrowsize=0.7, fontsize=9, fontname="sans-serif", fontcolor="#52606d"];',
        'q [label="Question", shape=ellipse, fillcolor="#ffffff"]; a [label="Answer", shape=ellipse, '
        'fillcolor="#ffffff"];',
    ]
    ids = {s.label: f"s{i}" for i, s in enumerate(spec.stages)}
    for stage in spec.stages:
        fill, font = LIT if stage == lit else DONE if stage.label in first_stage else TODO
        label = "\n".join(filter(None, (stage.label, stage.many)))
        link = ""
        if key and stage.label in first_stage:
            link = f', URL={_quote("#" + stage_anchor(key, first_stage[stage.label]))}, target="_self"'
        bold = ', penwidth=2.4, color="#0b4f4a"' if stage == lit else ""
        lines.append(
            f'{ids[stage.label]} [label={_quote(label)}, fillcolor="{fill}", fontcolor="{font}"'
            f"{link}{bold}, tooltip={_quote(stage.label)}];"
        )
    previous, before = "q", {}
    for stage in spec.stages:
        node = ids[stage.label]
        if stage.branch:  # an alternative to the stage before it: it leaves from where that one did
            lines.append(
                f'{before.get(previous, "q")} -> {node} [style=dashed, label="or"]; {node} -> a [style=dashed];'
            )
            continue
        lines.append(f"{previous} -> {node};")
        before[node], previous = previous, node
        if stage.loop_to in ids:
            lines.append(
                f"{node} -> {ids[stage.loop_to]} [style=dashed, constraint=false, "
                f"label={_quote(textwrap.fill(stage.loop_label, EDGE_LABEL_CHARS))}];"
            )
    lines.append(f"{previous} -> a;")
    return "\n".join(lines + ["}"])


def method_map(spec: MethodSpec, events: list[Event], *, lit: Stage | None = None, key: str = "") -> None:
    """The map, or nothing for a method that declares no stages."""
    if not spec.stages:
        return
    wide = len(spec.stages) <= 2
    st.graphviz_chart(map_dot(spec, events, lit=lit, key=key), width="stretch" if wide else "content")
    now = f" · now: **{lit.label}**" if lit else ""
    st.caption(f"{spec.label}'s pipeline from its own stage list; stages with events link to them in the trace{now}.")
