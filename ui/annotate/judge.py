"""Judging one question's pool, one passage at a time: blind by default (no method, rank, score, origin or other
annotators' labels), open for adjudication. A grade is saved the moment it is given; keys 0-3 give it, N moves on."""

from __future__ import annotations

import streamlit as st

from core.studio.labels import GRADES, Label, LabelError, PoolItem, PoolQuestion, resolve
from core.studio.labels.progress import queue_order
from ui.annotate.question_names import question_source
from ui.common import keys
from ui.common.annotator import label_store
from ui.common.text import esc, md


def _position(question: PoolQuestion, order: list[PoolItem]) -> int:
    wanted = st.session_state.setdefault(keys.ANNOTATE_POS, {}).get(question.question_id)
    ids = [i.pool_id for i in order]
    return ids.index(wanted) if wanted in ids else 0


def _move(question: PoolQuestion, pool_id: str | None) -> None:
    if pool_id is not None:
        st.session_state.setdefault(keys.ANNOTATE_POS, {})[question.question_id] = pool_id


def next_unjudged(order: list[PoolItem], mine: dict[str, int], shown: str) -> str | None:
    """The first passage of the queue without my grade, other than the one ``shown`` (that one only when it is the
    last left); None when all are judged. From the queue's head, not from where I am: the head holds the passages
    others have begun."""
    for item in sorted(order, key=lambda i: i.pool_id == shown):
        if item.pool_id not in mine:
            return item.pool_id
    return None


def _grade(
    question: PoolQuestion,
    item: PoolItem,
    grade: int,
    annotator: str,
    note_key: str,
    order: list[PoolItem],
    mine: dict[str, int],
) -> None:
    try:
        label_store().set_label(
            question.ref, item.pool_id, annotator, grade, st.session_state.get(note_key) or None, source="annotate page"
        )
    except LabelError as exc:
        st.session_state[keys.ANNOTATE_PROBLEM] = str(exc)
        return
    here = [i.pool_id for i in order].index(item.pool_id)
    st.session_state.setdefault(keys.ANNOTATE_SAVED, {})[question.question_id] = (here + 1, grade)
    if st.session_state.get(keys.ANNOTATE_ADVANCE, True):
        _move(question, next_unjudged(order, {**mine, item.pool_id: grade}, item.pool_id))


def _note(question: PoolQuestion, item: PoolItem, annotator: str, note_key: str, mine: dict[str, int]) -> None:
    """A note typed after the grade is saved with it; before a grade, it waits for the grade."""
    if item.pool_id in mine:
        try:
            label_store().set_label(
                question.ref,
                item.pool_id,
                annotator,
                mine[item.pool_id],
                st.session_state.get(note_key) or "",
                source="annotate page",
            )
        except LabelError as exc:
            st.session_state[keys.ANNOTATE_PROBLEM] = str(exc)


def _passage(item: PoolItem, number: int, total: int, open_mode: bool, given: dict[str, Label]) -> None:
    meta = ""
    if open_mode:
        seen = "; ".join(
            f"{o.method} #{o.rank}"
            + (
                " · generated" + (f" for “{o.gap}”" if o.gap else "")
                if o.generated
                else f" · {o.corpus} · score {o.score:.3g}"
            )
            for o in item.occurrences
        )
        labels = (
            "; ".join(
                f"{who}: {row.grade} {GRADES[row.grade]}" + (f" ({row.note})" if row.note else "")
                for who, row in given.items()
            )
            or "no labels yet"
        )
        meta = (
            f'<div class="snip-meta">{esc(", ".join(item.ids))} · shown by {esc(seen)}</div>'
            f'<div class="snip-meta">labels: {esc(labels)}</div>'
        )
    st.markdown(
        f'<div class="snip judge"><div class="snip-head"><span class="tag rank">Passage {number} of {total}'
        f'</span></div>{meta}<div class="full">{esc(item.blind_text())}</div></div>',
        unsafe_allow_html=True,
    )


def judge(question: PoolQuestion, annotator: str, open_mode: bool, target: int) -> None:
    """The question, one passage, its grade buttons and note, and where the annotator is in the pool: blind, in the
    queue's order (the passages others have begun and that need ``target`` judges first)."""
    labels, _ = resolve(question, label_store().labels([question.question_id]))
    mine = {pid: given[annotator].grade for pid, given in labels.items() if annotator in given}
    order = queue_order(question, labels, annotator, target) if not open_mode else question.items
    if not order:
        st.info("The runs of this question showed no documents (a method without retrieval).")
        return
    source = question_source(question.ref)
    st.markdown(f"**Question**{' · ' + md(source) if source else ''}\n\n{md(question.ref.question)}")
    if question.ref.options:
        st.markdown("\n".join(f"- {md(k)}\\. {md(v)}" for k, v in question.ref.options.items()))
    if open_mode and question.gold:
        st.success(f"Gold answer: {question.gold}. {question.ref.options.get(question.gold, '')}")
    here = _position(question, order)
    item = order[here]
    judged = sum(i.pool_id in mine for i in order)
    st.progress(judged / len(order), text=f"{judged} of {len(order)} passages of this question judged by you")
    _passage(item, here + 1, len(order), open_mode, labels.get(item.pool_id, {}))
    note_key = keys.annotate_note(question.question_id, item.pool_id)
    if note_key not in st.session_state:
        given = labels.get(item.pool_id, {}).get(annotator)
        st.session_state[note_key] = given.note if given else ""
    columns = st.columns(4)
    for column, (grade, name) in zip(columns, GRADES.items()):
        # keyed by the passage: a click made while the page still shows the passage before grades that one or is
        # dropped, never the passage the server has moved on to
        column.button(
            f"{grade} · {name}",
            key=f"annotate.grade.{item.pool_id}.{grade}",
            shortcut=str(grade),
            width="stretch",
            type="primary" if mine.get(item.pool_id) == grade else "secondary",
            on_click=_grade,
            args=(question, item, grade, annotator, note_key, order, mine),
        )
    if saved := st.session_state.get(keys.ANNOTATE_SAVED, {}).get(question.question_id):
        st.caption(f":material/check: Saved: passage {saved[0]} graded {saved[1]} · {GRADES[saved[1]]}")
    st.text_input(
        "Note (optional; saved with the grade)",
        key=note_key,
        on_change=_note,
        args=(question, item, annotator, note_key, mine),
    )
    if problem := st.session_state.pop(keys.ANNOTATE_PROBLEM, None):
        st.error(problem)
    back, nxt, unjudged, advance = st.columns([1, 1, 1.4, 2.2], vertical_alignment="center")
    back.button(
        "Previous",
        icon=":material/arrow_back:",
        key="annotate.prev",
        width="stretch",
        on_click=_move,
        args=(question, order[(here - 1) % len(order)].pool_id),
    )
    nxt.button(
        "Next",
        icon=":material/arrow_forward:",
        key="annotate.next",
        width="stretch",
        on_click=_move,
        args=(question, order[(here + 1) % len(order)].pool_id),
    )
    upcoming = next_unjudged(order, mine, item.pool_id)
    unjudged.button(
        "Next unjudged",
        icon=":material/skip_next:",
        key="annotate.next_unjudged",
        shortcut="N",
        disabled=upcoming is None,
        width="stretch",
        on_click=_move,
        args=(question, upcoming),
    )
    advance.toggle("Move on after a grade", key=keys.ANNOTATE_ADVANCE, value=True)
    if upcoming is None:
        st.success("You have judged every passage of this question. Pick another question above.")
