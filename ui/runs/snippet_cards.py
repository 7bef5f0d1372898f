"""Snippet cards: one retrieved or generated document with where it came from, what the method did with it
(a verdict, or only a reading-budget cut), whether the answer cites it, and its teaching-pack mark.

``snippet_card`` is the one place a card is drawn (as HTML, so cards can sit anywhere, even inside expanders).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from core.engine.methods.bounds import char_bounds
from core.engine.trace import AgentMessage, Answer, Event, GeneratedDoc, Hit, Retrieval, Verdict, VerdictItem
from core.studio.teaching import PassageMark
from ui.common.text import esc, short
from ui.runs.evidence_view import Highlight, card_classes, card_tag, marked_text, quotes

PREVIEW_CHARS = 220
CITED_TAG = '<span class="tag cited">cited</span>'
BUDGET_WORDS = "reading budget"  # how methods word a snippet left out because the evidence budget was full
BUDGET_TAG = "not read: over the reading budget"
SHORTENED = "shortened here ({shown} of {size:,} characters): click for the whole text"

Marks = Callable[[str], PassageMark | None]


def _no_marks(_: str) -> None:
    return None


@dataclass
class Evidence:
    """Everything a card needs to know about a document: where it came from, its verdict, if it is cited."""

    hits: dict[str, Hit] = field(default_factory=dict)
    generated: dict[str, GeneratedDoc] = field(default_factory=dict)
    verdicts: dict[str, VerdictItem] = field(default_factory=dict)
    cited: list[str] = field(default_factory=list)  # each id once, in the answer's order
    marks: Marks = _no_marks
    bounds: frozenset[int] = frozenset()  # the method's text bounds, where a text stops if the grammar cut it
    quoted: dict[str, list[str]] = field(default_factory=dict)  # doc id -> what agents quoted from it, in full
    highlight: Highlight | None = None  # the run's claims and their links, when shown: cards light with them

    @classmethod
    def of(cls, events: Iterable[Event], marks: Marks = _no_marks, method: str = "") -> Evidence:
        found = cls(marks=marks, bounds=char_bounds(method) if method else frozenset())
        for event in events:
            p = event.payload
            if isinstance(p, Retrieval):
                for hit in p.hits:
                    found.hits.setdefault(hit.snippet_id, hit)
            elif isinstance(p, GeneratedDoc):
                found.generated[p.doc_id] = p
            elif isinstance(p, Verdict):
                found.verdicts.update(merged(p.items))
            elif isinstance(p, Answer):
                found.cited = list(dict.fromkeys(p.cited))
            elif isinstance(p, AgentMessage):
                for span in _quoted(p.data):
                    found.quoted.setdefault(span["doc_id"], []).append(span["text"])
        return found

    def number(self, doc_id: str) -> str:
        """How the cards name a document: a retrieved one by its rank (#13), a generated one as such."""
        if doc_id in self.hits:
            return f"#{self.hits[doc_id].rank}"
        return "generated" if doc_id in self.generated else ""


def _quoted(data: dict[str, Any] | None) -> list[dict[str, str]]:
    """A reply's quotes: the records of its lists that name a document and give a text (an Extractor's spans)."""
    return [
        item
        for value in (data or {}).values()
        if isinstance(value, list)
        for item in value
        if isinstance(item, dict) and isinstance(item.get("doc_id"), str) and isinstance(item.get("text"), str)
    ]


def merged(items: Iterable[VerdictItem]) -> dict[str, VerdictItem]:
    """One verdict per document from one step: a step that judged a document several times (the Extractor's quotes
    from it, one verbatim and one not) kept it when it kept any of them, with every reason."""
    found: dict[str, VerdictItem] = {}
    for item in items:
        before = found.get(item.doc_id)
        if before is None:
            found[item.doc_id] = item
            continue
        keep = before.keep or item.keep
        found[item.doc_id] = VerdictItem(doc_id=item.doc_id, keep=keep, reason=f"{before.reason}; {item.reason}")
    return found


def is_budget_cut(item: VerdictItem | None) -> bool:
    return item is not None and not item.keep and BUDGET_WORDS in item.reason


def verdict_tag(item: VerdictItem | None, generated: bool) -> str:
    """A verdict as a coloured tag; a budget cut, a duplicate or a plain 'read' as neutral ones (no judgment)."""
    if item is None:
        return ""
    title = f' title="{esc(item.reason)}"' if item.reason else ""
    if is_budget_cut(item):
        return f'<span class="tag budget"{title}>{BUDGET_TAG}</span>'
    if item.reason.startswith("duplicate of"):
        return f'<span class="tag neutral"{title}>{esc(item.reason)}</span>'
    if item.keep and item.reason.startswith("read by"):
        return f'<span class="tag neutral"{title}>read</span>'
    word = ("selected" if generated else "kept") if item.keep else ("not selected" if generated else "dropped")
    return f'<span class="tag {"keep" if item.keep else "drop"}"{title}>{word}</span>'


def mark_tag(mark: PassageMark | None) -> str:
    if mark is None:
        return ""
    return f'<span class="tag teach {mark.role}" title="{esc(mark.case_title)}">{esc(mark.word)}</span>'


def mark_note(mark: PassageMark | None) -> str:
    if mark is None:
        return ""
    revised = f"<p><b>Since revised:</b> {esc(mark.superseded_by)}</p>" if mark.superseded_by else ""
    return (
        f'<details class="teach-note"><summary>Teaching note ({esc(mark.word)}, case “{esc(mark.case_title)}”)'
        f"</summary>{revised}<p>{esc(mark.note)}</p></details>"
    )


def _body(text: str, full: str) -> str:
    """The text (``full``: as HTML, its supporting spans marked), folded under a preview when it is long."""
    if len(text) <= PREVIEW_CHARS:
        return f'<div class="full">{full}</div>'
    more = f'<span class="more">{SHORTENED.format(shown=PREVIEW_CHARS, size=len(text))}</span>'
    return (
        f'<details><summary>{esc(short(text, PREVIEW_CHARS))} {more}</summary><div class="full">{full}</div></details>'
    )


def snippet_card(doc: Hit | GeneratedDoc, evidence: Evidence) -> str:
    """One document's card, retrieved or generated."""
    generated = isinstance(doc, GeneratedDoc)
    doc_id = doc.doc_id if generated else doc.snippet_id
    verdict = evidence.verdicts.get(doc_id)
    cited = doc_id in evidence.cited
    mark = None if generated else evidence.marks(doc_id)
    classes = ["snip"] + (["gen"] if generated else []) + (["cited"] if cited else [])
    classes += ["budget"] if is_budget_cut(verdict) else ["dropped"] if verdict and not verdict.keep else []
    classes += [f"teach-{mark.role}"] if mark else []
    lit = evidence.highlight
    classes += card_classes(lit, doc_id)
    if generated:
        head = f'<span class="tag generated">generated</span><span class="title">{esc(doc_id)}</span>'
        meta = f'<div class="snip-gap">fills the gap: {esc(doc.gap)}</div>' if doc.gap else ""
    else:
        scores = [f"fused {doc.score:.4g}"] + [
            f"{name} {value:.3g}" + (f" (#{doc.ranks[name]})" if name in doc.ranks else "")
            for name, value in doc.scores.items()
        ]
        head = (
            f'<span class="tag rank">#{doc.rank}</span><span class="tag corpus">{esc(doc.corpus)}</span>'
            f'<span class="title">{esc(doc.title or doc_id)}</span>'
        )
        meta = f'<div class="snip-meta">{esc(doc_id)} · {esc(" · ".join(scores))}</div>'
    return (
        f'<div class="{" ".join(classes)}"><div class="snip-head">{head}{mark_tag(mark)}'
        f"{verdict_tag(verdict, generated)}{CITED_TAG if cited else ''}{card_tag(lit, doc_id)}</div>{meta}"
        f"{_body(doc.text, marked_text(lit, doc_id, doc.text))}{quotes(lit, doc_id, doc.text)}{mark_note(mark)}</div>"
    )


def doc_card(doc_id: str, evidence: Evidence) -> str:
    doc = evidence.hits.get(doc_id) or evidence.generated.get(doc_id)
    if doc is not None:
        return snippet_card(doc, evidence)
    return f'<div class="snip"><span class="title">{esc(doc_id)}</span></div>'


def cards(html_cards: list[str]) -> None:
    if html_cards:
        st.markdown(f'<div class="cards">{"".join(html_cards)}</div>', unsafe_allow_html=True)
