"""An agent's structured reply drawn as fields, not raw JSON: short fields as chips, long text as paragraphs,
lists as bullets; the same while the reply is still being written (``core.engine.partial_reply`` reads it so far).

Drawn inside a run's trace (``evidence`` given), document ids become links to their cards, a text its reply format's
bound stopped says so, and a line the model repeated is drawn once with its count."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.common.text import folded, md
from ui.runs.cuts import cut_suffix
from ui.runs.id_links import linked
from ui.runs.snippet_cards import Evidence


def _flat(value: Any) -> bool:
    scalar = (str, int, float, bool)
    return isinstance(value, scalar) or (isinstance(value, list) and all(isinstance(v, scalar) for v in value))


def _text(value: str, evidence: Evidence | None) -> str:
    """A text field: its ids linked, and a note when a bound cut it."""
    return linked(value, evidence) + cut_suffix(value, evidence.bounds if evidence is not None else frozenset())


def _value(value: Any, evidence: Evidence | None) -> str:
    if isinstance(value, list):
        return ", ".join(_text(str(v), evidence) for v in value)
    return _text(str(value), evidence)


def _record(item: dict[str, Any], evidence: Evidence | None) -> str:
    """One object of a list (a claim and its ids, an expert and why, a snippet's judgment) as one line."""
    return " · ".join(f":gray[{md(k.replace('_', ' '))}] {_value(v, evidence) or '–'}" for k, v in item.items())


def _bullets(lines: list[str]) -> str:
    """Markdown bullets, a line the model repeated drawn once with its count."""
    return "\n".join(f"- {line}" + (f" :orange-badge[×{n}, repeated]" if n > 1 else "") for line, n in folded(lines))


def reply_fields(data: dict[str, Any], evidence: Evidence | None = None) -> None:
    """A parsed reply, compactly and in the order the model wrote it (an answer-first reply shows its letter before
    its reasoning): short values as chips on one line, a list of flat objects one line each; only deeper nesting
    falls back to a JSON view."""
    chips: list[str] = []
    html = evidence is not None  # id links are HTML
    for key, value in data.items():
        name = key.replace("_", " ")
        if isinstance(value, str | int | float | bool) and len(str(value)) <= 40:
            chips.append(f"**{md(name)}** `{value}`" if value != "" else f"**{md(name)}** –")
            continue
        if chips:  # the short values written before this field come before it
            st.markdown(" · ".join(chips))
            chips = []
        if isinstance(value, str):
            st.markdown(f"**{md(name)}:** {_text(value, evidence)}", unsafe_allow_html=html)
        elif isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
            lines = [_text(str(v), evidence) for v in value]
            st.markdown(f"**{md(name)}:**\n" + (_bullets(lines) or "- (none)"), unsafe_allow_html=html)
        elif isinstance(value, list) and all(isinstance(v, dict) and all(map(_flat, v.values())) for v in value):
            lines = [_record(v, evidence) for v in value]
            st.markdown(f"**{md(name)}:**\n" + _bullets(lines), unsafe_allow_html=html)
        else:
            st.markdown(f"**{md(name)}:**")
            st.json(value, expanded=1)
    if chips:
        st.markdown(" · ".join(chips))
