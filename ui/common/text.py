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
