"""Annotate's attribution mode: does this snippet support this claim of an answer? Supports, partly or no, for each
claim × snippet pair of the queue's runs, blind (no method, no linker verdict, no other annotator's label), then
agreement between annotators with the relevance mode's statistics."""

from __future__ import annotations

import hashlib

import streamlit as st

from core.engine.trace import Run
from core.studio.access import Action
from core.studio.labels import LabelError, PoolQuestion
from core.studio.labels.attribution import ATTRIBUTION, Pair, judged, pairs_of
from ui.annotate.question_names import question_name
from ui.annotate.review import agreement_view
from ui.common import access, keys, state
from ui.common.annotator import label_store
from ui.common.text import esc

PAGE = 6  # pairs a page
WORDS = list(ATTRIBUTION.values())  # supports, partly, no
ORIGINS = {"answer": "the final answer", "rationale": "the answer's reasoning", "finding": "a finding on the way"}


@st.cache_data(max_entries=64, show_spinner=False)
def _pairs(run_id: str) -> list[Pair]:
    """The pairs of a finished saved run (it does not change, so its id is key enough)."""
    run: Run | None = state.store().find_run(run_id)
    return pairs_of(run) if run is not None else []


def pairs_for(question: PoolQuestion) -> list[Pair]:
    return [p for r in question.runs if r.status == "ok" for p in _pairs(r.run_id)]


def blind_order(pairs: list[Pair], annotator: str) -> list[Pair]:
    """Shuffled per annotator, the same on every reload: neither the method nor the run is in the order."""
    return sorted(pairs, key=lambda p: hashlib.sha256(f"{annotator}\n{' '.join(p.key)}".encode()).hexdigest())


def _save(pair: Pair, annotator: str) -> None:
    """The label as chosen, with the note typed beside it; a note typed before a label waits for the label."""
    word = st.session_state.get(keys.attribution_grade(*pair.key))
    if word is None:
        return
    note = st.session_state.get(keys.attribution_note(*pair.key))
    try:
        label_store().set_attribution(pair, annotator, word, note or None, source="annotate page")
    except LabelError as exc:
        st.session_state[keys.ATTRIBUTION_PROBLEM] = str(exc)


def _pair(pair: Pair, number: int, annotator: str, mine: dict[tuple[str, str, str], tuple[int, str]]) -> None:
    with st.container(border=True, key=f"attr-pair-{number}"):
        st.markdown(f"**Claim {number}** :gray[· {ORIGINS[pair.claim.origin]}]")  # not its section: that names agents
        st.markdown(f'<div class="claim-judge">{esc(pair.claim.text)}</div>', unsafe_allow_html=True)
        title = pair.document.title if pair.document.source == "retrieved" else "A document the method wrote"
        st.markdown(
            f'<div class="snip judge"><div class="snip-head"><span class="title">{esc(title)}</span></div>'
            f'<div class="full">{esc(pair.document.text)}</div></div>',
            unsafe_allow_html=True,
        )
        given = mine.get(pair.key)
        grade, note = st.columns([3, 2], vertical_alignment="bottom")
        grade.radio(
            "Does this snippet support the claim?",
            WORDS,
            index=WORDS.index(ATTRIBUTION[given[0]]) if given is not None else None,
            horizontal=True,
            key=keys.attribution_grade(*pair.key),
            on_change=_save,
            args=(pair, annotator),
        )
        note.text_input(
            "Note (optional)",
            value=given[1] if given is not None else "",
            key=keys.attribution_note(*pair.key),
            on_change=_save,
            args=(pair, annotator),
        )


@st.fragment
def judge_attribution(questions: list[PoolQuestion], annotator: str) -> None:
    """A fragment: a label reruns only this part of the page."""
    by_id = {q.question_id: q for q in questions}
    qid = st.selectbox(
        "Question", list(by_id), key="annotate.attr.question", format_func=lambda q: question_name(by_id[q].ref, 90)
    )
    pairs = blind_order(pairs_for(by_id[qid]), annotator)
    if not pairs:
        st.info("The runs of this question make no claim a snippet could support (no cited or retrieved document).")
        return
    mine = {
        label.key: (label.grade, label.note)
        for label in label_store().attributions({p.run_id for p in pairs})
        if label.annotator == annotator
    }
    done = sum(p.key in mine for p in pairs)
    st.caption(
        f"You have labelled {done} of {len(pairs)} claim × snippet pairs of this question. Each is saved the moment "
        "you choose; which method made the claim, and what the evidence linker concluded, stay hidden."
    )
    if problem := st.session_state.pop(keys.ATTRIBUTION_PROBLEM, None):
        st.error(problem)
    pages = max(1, -(-len(pairs) // PAGE))
    page = st.number_input("Page", 1, pages, 1, key=f"annotate.attr.page.{qid}") if pages > 1 else 1
    first = (page - 1) * PAGE
    for number, pair in enumerate(pairs[first : first + PAGE], first + 1):
        _pair(pair, number, annotator, mine)


def agreement_attribution(questions: list[PoolQuestion]) -> None:
    if not access.notice(Action.ADJUDICATE):  # others' labels stay out of a visitor's sight: judging is blind
        return
    runs = {r.run_id for q in questions for r in q.runs}
    agreement_view(judged(label_store().attributions(runs)), "claim × snippet pairs")
