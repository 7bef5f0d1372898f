"""Claims and their evidence on screen: click a claim and the spans that support it light up in the snippet cards;
click a card's "supports" tag and the claims it supports light up.

The lighting is the browser's own: each claim and each document has a hidden radio button, the claims and the cards'
tags are its labels, and one stylesheet per run lights what carries the checked one's class
(``body:has(#id:checked) .token``). So a click costs no rerun, and every card of the run on the page (the answer's
cited ones, the Evidence tab, the trace) answers it, on every screen that draws runs with these views.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import streamlit as st

from core.engine.methods.bounds import char_bounds, cut_words
from core.engine.trace import Run
from core.studio.evidence import (
    LEVEL_WORDS,
    EvidenceMap,
    SupportLink,
    cut_at,
    link_run,
    reference_agreement,
)
from ui.common import keys
from ui.common.text import esc

TOGGLE = "Claims and their evidence"
TOGGLE_HELP = (
    "Each sentence of the answer, its reasoning and the agents' findings, linked to the words of the snippets that "
    "support it. Computed on this machine from the run's own text (the shipped embedder and the words), no model call."
)
UNMEASURED = "These links have not been measured against a person's labels."


def _token(*parts: str) -> str:
    return "ev" + hashlib.sha1("|".join(parts).encode()).hexdigest()[:10]


@dataclass
class Highlight:
    """A run's evidence map and the class names its claims and documents carry on this page."""

    emap: EvidenceMap
    scope: str  # the view's key: the same run drawn twice on a page gets two sets of buttons

    def claim(self, claim_id: str) -> str:
        return _token(self.scope, self.emap.run_id, "claim", claim_id)

    def doc(self, doc_id: str) -> str:
        return _token(self.scope, self.emap.run_id, "doc", doc_id)

    @property
    def none(self) -> str:
        return _token(self.scope, self.emap.run_id, "none")


def highlight_for(run: Run, key: str) -> Highlight | None:
    """The run's evidence map when its claims are shown (the toggle below the answer), else None."""
    if not st.session_state.get(keys.evidence_on(key)) or run.status != "ok" or run.answer is None:
        return None
    with st.spinner("Linking each claim to the snippets…"):
        return Highlight(link_run(run), key)


def render_claims(run: Run, highlight: Highlight | None, key: str) -> None:
    """The toggle, and when it is on, every claim by where it was said, with its level: click one to light its
    spans in the cards."""
    if run.status != "ok" or run.answer is None:
        return
    st.toggle(TOGGLE, key=keys.evidence_on(key), help=TOGGLE_HELP)
    if highlight is None:
        return
    emap, lit = highlight.emap, highlight
    bounds = char_bounds(run.method)
    agreement = reference_agreement()
    # none starts checked: React holds an input drawn with ``checked`` as controlled and puts it back after every
    # click, which would uncheck the picked radio of the same group
    radios = [f'<input type="radio" class="ev-radio" name="{lit.none}" id="{lit.none}">']
    radios += [f'<input type="radio" class="ev-radio" name="{lit.none}" id="{lit.claim(c.id)}">' for c in emap.claims]
    radios += [f'<input type="radio" class="ev-radio" name="{lit.none}" id="{lit.doc(d)}">' for d in emap.documents]
    rows, section = [], None
    for claim in emap.claims:
        if claim.section != section:
            section = claim.section
            rows.append(f'<div class="ev-section">{esc(section)} · {esc(claim.agent)}</div>')
        links = emap.links_of(claim.id)
        level = emap.level_of(claim.id)
        docs = [ln.snippet_id for ln in links if ln.level != "not_found"]
        classes = ["ev-claim", f"ev-lvl-{level}", lit.claim(claim.id), *(lit.doc(d) for d in docs)]
        by = ", ".join(dict.fromkeys(docs)) or "no snippet"
        note = ' <span class="ev-note">restates the question</span>' if claim.restates_question else ""
        if bound := cut_at(run, claim, bounds):
            note += f' <span class="ev-note">… cut: {esc(cut_words(bound))}</span>'
        rows.append(
            f'<label for="{lit.claim(claim.id)}" class="{" ".join(classes)}" title="{esc(by)}">'
            f'<span class="tag ev-{level}">{esc(LEVEL_WORDS[level])}</span> {esc(claim.text)}{note}</label>'
        )
    unsupporting = emap.cited_unsupporting()
    figure = agreement.sentence() if agreement else UNMEASURED
    st.markdown(
        f"<style>{stylesheet(lit)}</style>"
        f'<div class="ev-claims">{"".join(radios)}'
        f'<div class="ev-figure">{esc(figure)}</div>{"".join(rows)}'
        + (
            f'<div class="ev-unsupporting">Cited but supporting no claim: {esc(", ".join(unsupporting))}</div>'
            if unsupporting
            else ""
        )
        + f'<label for="{lit.none}" class="ev-clear">clear the highlight</label></div>',
        unsafe_allow_html=True,
    )
    st.caption(
        f"{len(emap.claims)} claims · {len(emap.documents)} snippets · linked in {emap.seconds:.1f} s. "
        "Click a claim to light its supporting spans in the snippet cards; click a card's “supports” tag to light "
        "the claims it supports."
    )


def stylesheet(lit: Highlight) -> str:
    """What lights up when each claim or document is picked."""
    claims = [lit.claim(c.id) for c in lit.emap.claims]
    docs = [lit.doc(d) for d in lit.emap.documents]

    def rule(selector: str, declarations: str) -> str:
        picked = ",".join(f"body:has(#{t}:checked) {selector.format(t=t)}" for t in claims + docs)
        return f"{picked}{{{declarations}}}" if picked else ""

    return "".join(
        [
            rule(".ev-claim.{t}", "background:#fef3c7;box-shadow:0 0 0 2px #d97706;"),
            rule(".snip.{t}", "box-shadow:0 0 0 2px #d97706;"),
            rule("mark.{t}", "background:#fde68a;color:inherit;"),
            rule(".ev-quote.{t}", "display:block;"),
        ]
    )


def links_into(lit: Highlight, doc_id: str) -> list[SupportLink]:
    return lit.emap.claims_for(doc_id)


def card_classes(lit: Highlight | None, doc_id: str) -> list[str]:
    """The classes a card carries: its own document's, and those of the claims it supports."""
    if lit is None or doc_id not in lit.emap.documents:
        return []
    return [lit.doc(doc_id), *dict.fromkeys(lit.claim(ln.claim_id) for ln in links_into(lit, doc_id))]


def card_tag(lit: Highlight | None, doc_id: str) -> str:
    """The card's "supports N claims" tag (a label: click it to light those claims), or that a cited card supports
    none."""
    if lit is None or doc_id not in lit.emap.documents:
        return ""
    claims = dict.fromkeys(ln.claim_id for ln in links_into(lit, doc_id))
    if claims:
        words = f"supports {len(claims)} claim{'s' if len(claims) != 1 else ''}"
        return f'<label for="{lit.doc(doc_id)}" class="tag ev-doc-pick" title="light the claims">{words}</label>'
    if lit.emap.documents[doc_id].cited:
        return '<span class="tag ev-none" title="the answer cites it">supports no claim</span>'
    return ""


def marked_text(lit: Highlight | None, doc_id: str, text: str) -> str:
    """The document's text, escaped, its supporting spans wrapped in marks that light with their claims."""
    links = links_into(lit, doc_id) if lit is not None else []
    if not links:
        return esc(text)
    cuts = sorted({0, len(text), *(p for ln in links for p in ln.span)})
    out = []
    for a, b in zip(cuts, cuts[1:]):
        covering = [ln for ln in links if ln.span[0] <= a and b <= ln.span[1]]
        piece = esc(text[a:b])
        if covering:
            classes = " ".join(dict.fromkeys(lit.claim(ln.claim_id) for ln in covering))
            piece = f'<mark class="ev-span {lit.doc(doc_id)} {classes}">{piece}</mark>'
        out.append(piece)
    return "".join(out)


def quotes(lit: Highlight | None, doc_id: str, text: str) -> str:
    """Each supporting span as a quote under the card, shown while its claim (or this card) is picked: the span may
    sit in the folded part of a long card."""
    if lit is None:
        return ""
    out = []
    for ln in links_into(lit, doc_id):
        span = text[ln.span[0] : ln.span[1]]
        classes = f"ev-quote {lit.claim(ln.claim_id)} {lit.doc(doc_id)}"
        judge = f" · judge: {esc(LEVEL_WORDS[ln.judge_level])}: {esc(ln.judge_why)}" if ln.judge_level else ""
        out.append(
            f'<div class="{classes}"><span class="tag ev-{ln.level}">{esc(LEVEL_WORDS[ln.level])}</span> '
            f'<mark class="ev-span-lit">{esc(span)}</mark><div class="ev-why">{esc(ln.why)}{judge}</div></div>'
        )
    return "".join(out)
