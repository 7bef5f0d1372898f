"""Labels inside the trace views (Ask, Compare, History): each document card of a run with its labels (how many
annotators gave each grade) and a grade control for the current annotator, saved the moment it is given."""

from __future__ import annotations

from collections import Counter

import streamlit as st

from core.engine.trace import Run
from core.studio.labels import GRADES, Label, LabelError, derive_question, resolve
from core.studio.labels.identity import generated_id
from core.studio.labels.pool import PoolQuestion, RunFilter, collect
from ui.common import keys
from ui.common.annotator import identify, label_store
from ui.common.state import store
from ui.runs.snippet_cards import Evidence, cards, snippet_card

CHOICES = list(GRADES)


def _counts(given: dict[str, Label]) -> str:
    counts = Counter(row.grade for row in given.values())
    if not counts:
        return "not judged yet"
    return " · ".join(f"{counts[g]}× {g} {GRADES[g]}" for g in sorted(counts, reverse=True))


def _save(run: Run, snippet_id: str, widget: str, annotator: str) -> None:
    grade = st.session_state.get(widget)
    if grade is None:
        return
    labels = label_store()
    ref = derive_question(
        run.question,
        run.options,
        registered={row["qhash"]: qid for qid, row in labels.registered().items() if row["qhash"]},
    )
    try:
        labels.set_label(ref, snippet_id, annotator, grade, source=f"trace {run.id}")
    except LabelError as exc:
        st.session_state[keys.problem_of(widget)] = str(exc)
        return
    if not store().has_run(run.id):  # a toast, since the page may no longer draw this run
        st.toast(
            f"Run {run.id} was deleted meanwhile. Your label is saved for question {ref.question_id} and "
            f"snippet {snippet_id}: it counts wherever another run of this question shows the snippet.",
            icon=":material/warning:",
        )


def _question(run: Run) -> PoolQuestion | None:
    """The run's question pooled over every saved run (labels of text-identical snippets count too)."""
    ref = derive_question(run.question, run.options)
    return next(iter(collect(store().path, RunFilter(qhash=ref.qhash))), None)


@st.fragment
def label_tab(run: Run, evidence: Evidence, key: str) -> None:
    """Every document the run showed, each with its labels and the current annotator's grade."""
    annotator = identify(key=f"labels-{key}")
    question = _question(run)
    if question is None:
        st.caption("This run is not saved, so its documents cannot be labelled here.")
        return
    labels, _ = resolve(question, label_store().labels([question.question_id]))
    docs = [(h.snippet_id, snippet_card(h, evidence)) for h in evidence.hits.values()]
    docs += [(generated_id(d.text), snippet_card(d, evidence)) for d in evidence.generated.values() if d.text.strip()]
    judged = sum(bool(labels.get(question.by_id.get(sid, sid))) for sid, _ in docs)
    st.caption(
        f"Question {question.question_id} · {judged} of {len(docs)} documents judged by someone. Labels belong "
        "to the question and the snippet, so every run that shows a snippet shares them."
    )
    for snippet_id, card in docs:
        given = labels.get(question.by_id.get(snippet_id, snippet_id), {})
        left, right = st.columns([4, 1], vertical_alignment="top")
        with left:
            cards([card])
        with right:
            st.caption(_counts(given))
            if annotator:
                widget = keys.trace_label(key, run.id, snippet_id)
                mine = label.grade if (label := given.get(annotator)) else None
                if widget not in st.session_state or st.session_state[widget] != mine:
                    st.session_state[widget] = mine
                st.segmented_control(
                    "Your grade",
                    CHOICES,
                    key=widget,
                    format_func=lambda g: str(g),
                    help=" · ".join(f"{g} {n}" for g, n in GRADES.items()),
                    on_change=_save,
                    args=(run, snippet_id, widget, annotator),
                )
                if problem := st.session_state.pop(keys.problem_of(widget), None):
                    st.warning(problem)
