"""Showing model and corpus text safely: as literal Markdown, or as escaped HTML."""

from __future__ import annotations

import html
import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+\-.!|$~:])")


def md(text: str) -> str:
    """Text shown literally by st.markdown: no emphasis, links, LaTeX ($) or :colour[...] directives."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def folded(items: list[str]) -> list[tuple[str, int]]:
    """Each distinct line once, in the order it first came, with how many times it came (ignoring spacing and
    case, as a model that repeats itself rarely repeats the spacing too)."""
    counts: dict[str, int] = {}
    first: dict[str, str] = {}
    for item in items:
        key = " ".join(item.split()).casefold()
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, item)
    return [(first[k], n) for k, n in counts.items()]


def duration(seconds: float) -> str:
    """A stretch of time as people say it: "45 s", "3 min 05 s", "1 h 20 min"."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
