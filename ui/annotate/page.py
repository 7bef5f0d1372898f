"""Annotate: pooled, blind, graded judging of what every method retrieved or generated for a question, agreement
between annotators, adjudication, and per-method retrieval metrics from the labels."""

from __future__ import annotations

from datetime import date, timedelta
from functools import lru_cache

import streamlit as st

from core.engine.paths import REPO_ROOT
from core.studio.access import Action
from core.studio.eval.results import evaluated_datasets
from core.studio.labels import PoolQuestion, RunFilter, collect, resolve
from core.studio.labels.pool import day_start
from core.studio.labels.progress import TARGET_ANNOTATORS, progress, waiting_on_others
from ui.annotate.attribution import agreement_attribution, judge_attribution
from ui.annotate.exchange import exchange
from ui.annotate.judge import judge
from ui.annotate.metrics import metrics_view, settings_form
from ui.annotate.question_names import question_name
from ui.annotate.review import agreement_table, disagreement_list
from ui.common import access, keys, state
from ui.common.annotator import identify, label_store
from ui.common.chrome import header
from ui.common.knobs import method_label
from ui.runs.question_form import teaching_cases

GUIDELINES = REPO_ROOT / "docs" / "annotation_guidelines.md"
STYLE = REPO_ROOT / "assets" / "annotate.css"
MODES = {
    "relevance": "Relevance: a passage for its question",
    "attribution": "Attribution: a snippet for a claim of an answer",
}
SOURCES = {"all": "All runs", "teaching": "Teaching-pack cases", "eval": "An evaluation's runs"}


@lru_cache(maxsize=2)
def _read(path) -> str:
    return path.read_text(encoding="utf-8")


def queue_form() -> tuple[RunFilter, int]:
    """What to annotate: the runs that make the queue, and the target number of annotators per snippet."""
    methods = sorted({r["method"] for r in state.store().list_runs(limit=100_000)})
    with st.expander("Queue: which runs to judge", expanded=False, icon=":material/filter_list:"):
        source = st.radio("Runs", list(SOURCES), format_func=SOURCES.get, horizontal=True, key="annotate.source")
        cases, datasets = frozenset(), frozenset()
        if source == "teaching":
            by_id = {c.id: c for c in teaching_cases()}
            cases = frozenset(
                st.multiselect(
                    "Cases (none = every case)",
                    list(by_id),
                    key="annotate.cases",
                    format_func=lambda c: f"{by_id[c].specialty} · {by_id[c].title}",
                )
            )
        elif source == "eval":
            datasets = frozenset(
                st.multiselect(
                    "Datasets (none = every dataset)", evaluated_datasets(state.store()), key="annotate.datasets"
                )
            )
        left, middle, right = st.columns([2, 2, 1])
        chosen = left.multiselect(
            "Methods (none = every method)", methods, format_func=method_label, key="annotate.methods"
        )
        days = middle.date_input(
            "Started between", value=(date.today() - timedelta(days=365), date.today()), key="annotate.days"
        )
        target = right.number_input("Annotators per snippet", 1, 10, TARGET_ANNOTATORS, key="annotate.target")
    since = until = None
    if isinstance(days, tuple) and len(days) == 2:
        since, until = day_start(days[0]), day_start(days[1] + timedelta(days=1))
    return RunFilter(
        source=source, cases=cases, datasets=datasets, methods=frozenset(chosen), since=since, until=until
    ), int(target)


def _question_label(question: PoolQuestion, done: dict[str, int]) -> str:
    mark = "✓" if done[question.question_id] == len(question.items) and question.items else "·"
    return f"{mark} {done[question.question_id]}/{len(question.items)} · {question_name(question.ref, 80)}"


@st.fragment
def _judge_tab(questions: list[PoolQuestion], annotator: str, target: int) -> None:
    """A fragment: giving a grade reruns only this part of the page."""
    rows = label_store().labels([q.question_id for q in questions])
    st.caption(progress(questions, rows, annotator, target).describe())
    given = {q.question_id: resolve(q, rows)[0] for q in questions}
    done = {
        q.question_id: sum(annotator in given[q.question_id].get(i.pool_id, {}) for i in q.items) for q in questions
    }
    by_id = {q.question_id: q for q in questions}
    choice, mode = st.columns([4, 1], vertical_alignment="bottom")
    # questions with passages still to judge first, and among them those with passages others have begun that need
    # more judges (as the passages within a question are queued), so the default is where annotators meet
    ordered = sorted(
        by_id,
        key=lambda qid: (
            done[qid] == len(by_id[qid].items),
            not waiting_on_others(by_id[qid], given[qid], annotator, target),
        ),
    )
    qid = choice.selectbox(
        "Question", ordered, key="annotate.question", format_func=lambda q: _question_label(by_id[q], done)
    )
    open_mode = access.current().may(Action.ADJUDICATE) and mode.toggle(
        "Open mode",
        key="annotate.open",
        help="For adjudication: shows the methods, ranks, scores, origin, every label and the gold answer.",
    )
    judge(by_id[qid], annotator, open_mode, target)


def attribution_mode(questions: list[PoolQuestion], annotator: str | None) -> None:
    judging, agreement = st.tabs(["Judge claims", "Agreement"], key="annotate.attr.view", on_change="rerun")
    if judging.open:
        with judging:
            if annotator:
                judge_attribution(questions, annotator)
            else:
                st.info("Type your name above to start judging.")
    if agreement.open:
        with agreement:
            agreement_attribution(questions)


def page() -> None:
    header(
        "Annotate",
        "Judge how relevant each passage is to its question, without knowing which method found it. "
        "Agreement and per-method retrieval metrics follow from the labels.",
    )
    st.html(f"<style>{_read(STYLE)}</style>")
    with st.expander("Guidelines: what each grade means", icon=":material/menu_book:"):
        st.markdown(_read(GUIDELINES))
    annotator = identify()
    flt, target = queue_form()
    questions = collect(state.store().path, flt)
    if not questions:
        st.info("No saved run matches this queue. Runs appear here once Ask, Compare or an evaluation saves them.")
        return
    mode = st.segmented_control(
        "What to judge", list(MODES), format_func=MODES.get, default="relevance", key=keys.ANNOTATE_MODE
    )
    if mode == "attribution":
        attribution_mode(questions, annotator)
        return
    # only the open tab is computed (switching tabs reruns), so each shows the labels as they are now
    judging, agreement, metrics, files = st.tabs(
        ["Judge", "Agreement", "Metrics", "Export and import"], key=keys.ANNOTATE_VIEW, on_change="rerun"
    )
    if judging.open:
        with judging:
            if annotator:
                _judge_tab(questions, annotator, target)
            else:
                st.info("Type your name above to start judging.")
    if agreement.open:
        with agreement:
            if access.notice(Action.ADJUDICATE):  # others' labels stay out of a visitor's sight: judging is blind
                agreement_table(questions)
                disagreement_list(questions, annotator, st.session_state.get(keys.ANNOTATE_RELEVANT, 2))
    if metrics.open:
        with metrics:
            metrics_view(questions, settings_form(label_store().annotators()))
    if files.open:
        with files:
            exchange(lambda: collect(state.store().path), annotator)
