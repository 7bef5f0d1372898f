"""An agent's structured reply drawn as fields, not raw JSON: short fields as chips, long text as paragraphs,
lists as bullets; the same while the reply is still being written (``core.engine.partial_reply`` reads it so far)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ui.common.text import md


def _flat(value: Any) -> bool:
    scalar = (str, int, float, bool)
    return isinstance(value, scalar) or (isinstance(value, list) and all(isinstance(v, scalar) for v in value))


def _record(item: dict[str, Any]) -> str:
    """One object of a list (a claim and its ids, an expert and why, a snippet's judgment) as one line."""
    return " · ".join(
        f":gray[{md(k.replace('_', ' '))}] {md(', '.join(map(str, v)) if isinstance(v, list) else str(v)) or '–'}"
        for k, v in item.items()
    )


def reply_fields(data: dict[str, Any]) -> None:
    """A parsed reply, compactly and in the order the model wrote it (an answer-first reply shows its letter before
    its reasoning): short values as chips on one line, a list of flat objects one line each; only deeper nesting
    falls back to a JSON view."""
    chips: list[str] = []
    for key, value in data.items():
        name = key.replace("_", " ")
        if isinstance(value, str | int | float | bool) and len(str(value)) <= 40:
            chips.append(f"**{md(name)}** `{value}`" if value != "" else f"**{md(name)}** –")
            continue
        if chips:  # the short values written before this field come before it
            st.markdown(" · ".join(chips))
            chips = []
        if isinstance(value, str):
            st.markdown(f"**{md(name)}:** {md(value)}")
        elif isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
            st.markdown(f"**{md(name)}:**\n" + ("\n".join(f"- {md(str(v))}" for v in value) or "- (none)"))
        elif isinstance(value, list) and all(isinstance(v, dict) and all(map(_flat, v.values())) for v in value):
            st.markdown(f"**{md(name)}:**\n" + "\n".join(f"- {_record(v)}" for v in value))
        else:
            st.markdown(f"**{md(name)}:**")
            st.json(value, expanded=1)
    if chips:
        st.markdown(" · ".join(chips))
