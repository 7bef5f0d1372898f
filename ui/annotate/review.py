"""Agreement between annotators, the disagreements side by side, and adjudication: a final label per snippet."""

from __future__ import annotations

import streamlit as st

from core.studio.access import Action
from core.studio.labels import GRADES, Label, LabelError, PoolQuestion
from core.studio.labels.agreement import Agreement, Judged, alpha, fleiss, pairwise
from core.studio.labels.review import Conflict, conflicts, judged_items
from ui.annotate.question_names import question_name
from ui.common import access, keys
from ui.common.annotator import label_store
from ui.common.text import esc, md, short

PAGE = 10  # disputed snippets a page


def _value(a: Agreement) -> str:
    return "—" if a.value is None else f"{a.value:.2f}"


def _interval(a: Agreement) -> str:
    return f"{a.low:.2f} to {a.high:.2f}" if a.low is not None else "—"


def agreement_table(questions: list[PoolQuestion]) -> None:
    agreement_view(judged_items(questions, label_store().labels([q.question_id for q in questions])), "snippets")


def agreement_view(judged: Judged, unit: str) -> None:
    """The agreement figures over ``judged`` (relevance: snippets; attribution: claim × snippet pairs)."""
    annotators = sorted({a for grades in judged.values() for a in grades})
    if len(annotators) < 2:
        st.info(
            f"Agreement needs two annotators; {len(annotators)} has labelled this queue so far"
            + (f" ({annotators[0]})." if annotators else ".")
        )
        return
    pairs = pairwise(judged)
    st.markdown(
        f"**Linear-weighted Cohen's kappa per pair** (scikit-learn), on the {unit} both judged; "
        f"95% bootstrap interval over those {unit}."
    )
    st.dataframe(
        [
            {
                "annotators": " / ".join(a.annotators),
                "n (both judged)": a.n,
                "kappa": _value(a),
                "95% interval": _interval(a),
                "identical grades": f"{a.exact:.0%}" if a.exact is not None else "—",
                "note": a.why,
            }
            for a in pairs
        ],
        hide_index=True,
        key=f"annotate.kappa.{unit}",
    )
    many = [a for a in (fleiss(judged), alpha(judged)) if a is not None]
    if many:
        st.markdown(
            "**All annotators:** "
            + " · ".join(f"{md(a.name)} {_value(a)} (n={a.n}{', ' + md(a.why) if a.why else ''})" for a in many)
        )
        st.caption(
            f"Fleiss' kappa (statsmodels) on the {unit} every annotator judged; Krippendorff's alpha "
            f"(ordinal, `krippendorff`) on every one of the {unit} two or more judged."
        )


def _adjudicate(conflict: Conflict, widget: str, adjudicator: str) -> None:
    grade = st.session_state.get(widget)
    if grade is None or not access.allowed(Action.ADJUDICATE):
        return
    try:
        label_store().set_final(conflict.question.ref, conflict.item.pool_id, grade, adjudicator)
    except LabelError as exc:
        st.session_state[keys.problem_of(widget)] = str(exc)


def _side(row: Label) -> str:
    note = f'<div class="why">“{esc(row.note)}”</div>' if row.note else ""
    return (
        f'<div class="side"><b>{esc(row.annotator)}</b>: <span class="tag grade-{row.grade}">'
        f"{row.grade} {GRADES[row.grade]}</span>{note}</div>"
    )


def _page(found: list[Conflict]) -> tuple[int, int]:
    """The disputed snippets shown, ``found[start:end]``: a page of ``PAGE`` chosen under the count."""
    starts = list(range(0, len(found), PAGE))
    if len(starts) < 2:
        return 0, len(found)
    if st.session_state.get(keys.ADJUDICATION_PAGE) not in starts:  # fewer disputes than when it was chosen
        st.session_state[keys.ADJUDICATION_PAGE] = 0
    start = st.selectbox(
        "Snippets",
        starts,
        key=keys.ADJUDICATION_PAGE,
        format_func=lambda s: f"{s + 1}–{min(s + PAGE, len(found))} of {len(found)}",
        help="Widest gaps first",
    )
    return start, min(start + PAGE, len(found))


def disagreement_list(questions: list[PoolQuestion], annotator: str | None, relevant: int) -> None:
    """One row per disputed snippet, with every annotator's grade and note, and its final label; the snippet's text
    folded under its first words, ten rows a page (three annotators' full texts ran to thousands of pixels)."""
    store = label_store()
    ids = [q.question_id for q in questions]
    found = conflicts(questions, store.labels(ids), store.finals(ids), relevant)
    settled = sum(c.final is not None for c in found)
    st.markdown(
        f"**Disagreements** · {len(found)} snippet{'s' if len(found) != 1 else ''} (grades 2 or more apart, "
        f"or one relevant and one not); {settled} adjudicated."
    )
    start, end = _page(found)
    for n, c in enumerate(found[start:end], start):
        widget = keys.final_grade(c.question.question_id, c.item.pool_id)
        with st.container(border=True, key=f"annotate-conflict-{n}"):
            st.markdown(md(question_name(c.question.ref, 140)))
            text = c.item.blind_text()
            with st.expander(f"{n + 1}. {md(short(text, 110))}"):
                st.markdown(f'<div class="snip"><div class="full">{esc(text)}</div></div>', unsafe_allow_html=True)
            st.markdown(f'<div class="sides">{"".join(_side(row) for row in c.given)}</div>', unsafe_allow_html=True)
            if widget not in st.session_state:
                st.session_state[widget] = c.final.grade if c.final else None
            if annotator:
                st.segmented_control(
                    "Final label (adjudication)",
                    list(GRADES),
                    key=widget,
                    format_func=lambda g: f"{g} {GRADES[g]}",
                    on_change=_adjudicate,
                    args=(c, widget, annotator),
                )
            if c.final:
                st.caption(f"Final: {c.final.grade} {GRADES[c.final.grade]} by {c.final.adjudicator}")
            if problem := st.session_state.pop(keys.problem_of(widget), None):
                st.error(problem)
