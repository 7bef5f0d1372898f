"""Document ids in a trace (an agent's citations, the arbiter's columns, a reply's id lists) drawn as links to their
snippet card: the number the cards carry (#13) and the id; a click opens the card's content right there,
highlighted, in whichever tab or expander the id was read. An id the run never retrieved or generated stays text."""

from __future__ import annotations

import re
from functools import cache

from ui.common.text import esc, md, short
from ui.runs.snippet_cards import Evidence, is_budget_cut

POP_CHARS = 700  # a card's text in the popover; the card itself, in the Evidence tab, has it all


@cache
def _pattern(ids: tuple[str, ...]) -> re.Pattern[str] | None:
    if not ids:
        return None
    alternatives = "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))  # the longest id first
    return re.compile(rf"(?<![\w:-])({alternatives})(?![\w-])")


def known(evidence: Evidence) -> tuple[str, ...]:
    return tuple(sorted({*evidence.hits, *evidence.generated}))


def id_chip(doc_id: str, evidence: Evidence) -> str:
    """One id as inline HTML (spans only, so it can sit inside a sentence or a list item): its card's number and the
    id; focused (clicked, or tabbed to) it opens the card's title, verdict and text beneath."""
    doc = evidence.hits.get(doc_id) or evidence.generated.get(doc_id)
    if doc is None:
        return esc(doc_id)
    generated = doc_id in evidence.generated
    number = evidence.number(doc_id)
    verdict = evidence.verdicts.get(doc_id)
    said = []
    if doc_id in evidence.cited:
        said.append("cited by the answer")
    if verdict is not None:
        said.append(
            "not read (over the reading budget)"
            if is_budget_cut(verdict)
            else ("kept" if verdict.keep else "dropped") + (f": {verdict.reason}" if verdict.reason else "")
        )
    title = doc_id if generated else (getattr(doc, "title", "") or doc_id)
    where = "generated document" if generated else f"{number} in the Evidence tab · {getattr(doc, 'corpus', '')}"
    text = short(doc.text, POP_CHARS)
    cut = (
        f" <i>(shortened: the whole text is on card {esc(number)} in the Evidence tab)</i>" if text != doc.text else ""
    )
    classes = "idref gen" if generated else "idref"
    return (
        f'<span class="{classes}" tabindex="0" data-doc="{esc(doc_id)}" title="{esc(title)}">'
        f'<span class="idnum">{esc(number)}</span><span class="idname">{esc(doc_id)}</span>'
        f'<span class="idpop"><span class="idtitle">{esc(title)}</span>'
        f'<span class="idwhere">{esc(where)}{" · " + esc("; ".join(said)) if said else ""}</span>'
        f'<span class="idtext">{esc(text)}{cut}</span></span></span>'
    )


def linked(text: str, evidence: Evidence | None) -> str:
    """A text as literal Markdown with every known id in it drawn as a chip (draw it with unsafe_allow_html)."""
    pattern = _pattern(known(evidence)) if evidence is not None else None
    if pattern is None:
        return md(text)
    parts = pattern.split(text)  # text, id, text, id, ..., text
    return "".join(id_chip(part, evidence) if i % 2 else md(part) for i, part in enumerate(parts))
