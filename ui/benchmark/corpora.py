"""The Benchmark page's corpora: which ones the retrieving arms search, a warning when they are the default ones
(written for the teaching cases, not for a benchmark), a retrieval check of a few of the benchmark's questions, and
the corpora to search instead: those already indexed, or a folder to add."""

from __future__ import annotations

import streamlit as st

from core.engine.methods.contract import MethodSpec
from core.engine.retrieval.fit import TopicFit, topic_fit
from core.studio.eval import BenchItem
from ui.common import keys, state
from ui.common.corpora import add_corpus, known_corpora, use_only
from ui.common.links import page_link
from ui.runs.launch import open_retriever_for

SAMPLE = 5
DEFAULT_NOTE = (
    "The default corpora are the HPO phenotype definitions and the teaching pack, written for the teaching "
    "cases: most benchmark questions retrieve off-topic passages from them."
)


def sample(items: list[BenchItem], n: int = SAMPLE) -> list[BenchItem]:
    """A few questions, one dataset after another, so each dataset is checked."""
    by_dataset: dict[str, list[BenchItem]] = {}
    for item in items:
        by_dataset.setdefault(item.dataset, []).append(item)
    picked, depth = [], 0
    while len(picked) < min(n, len(items)):
        picked += [group[depth] for group in by_dataset.values() if depth < len(group)][: n - len(picked)]
        depth += 1
    return picked


def _run_check(spec: MethodSpec, questions: list[BenchItem], key: tuple) -> None:
    retriever, problem = open_retriever_for(spec)
    if problem:
        st.error(problem)
        return
    bar = st.progress(0.0, text="searching the corpora")

    def progress(done: int, total: int) -> None:
        bar.progress(done / total, text=f"searching the corpora: {done} of {total} questions")

    st.session_state[keys.BENCH_CORPUS_CHECK] = (
        key,
        topic_fit(retriever, [q.question.text for q in questions], progress=progress),
    )
    bar.empty()


def _alternatives(names: list[str]) -> None:
    """The corpora to search instead: those already indexed here, one click away, and a folder to add."""
    others = [info for info in known_corpora() if info.name not in names]
    built = [info for info in others if info.built]
    if built:
        listed = ", ".join(f"**{info.name}** ({info.snippets:,} snippets)" for info in built)
        st.markdown(f"Already indexed here: {listed}.")
        if st.button("Search these instead", icon=":material/swap_horiz:", key="bench.use_indexed"):
            use_only([str(info.path) for info in built])
            st.session_state.pop(keys.BENCH_CORPUS_CHECK, None)
            st.rerun()
    waiting = [info.name for info in others if not info.built]
    if waiting:
        st.caption(f"Known but not indexed yet: {', '.join(waiting)} (build them in Settings › Corpora).")
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    typed = left.text_input(
        "Or add a corpus: a .jsonl / .jsonl.gz file or a folder of them",
        key="bench.new_corpus",
        placeholder="/data/corpora/statpearls",
    )
    if right.button("Add", key="bench.add_corpus", disabled=not typed.strip(), width="stretch"):
        if problem := add_corpus(typed.strip()):
            st.error(problem)
        else:
            st.session_state.pop(keys.BENCH_CORPUS_CHECK, None)
            st.rerun()
    page_link("settings", "Settings › Corpora", icon=":material/settings:")


def corpora_check(names: list[str], searching: list[MethodSpec], items: list[BenchItem]) -> None:
    """Shown when an arm retrieves: the corpora, a check of a few questions against them, what to do if they miss."""
    if not searching:
        return
    default = state.corpus_selection() is None and st.session_state.get(keys.RETRIEVER_OVERRIDE) is None
    with st.container(border=True, key="bench-corpora"):
        st.markdown(f"**Corpora searched** · {', '.join(names) or 'none'}" + (" (the default)" if default else ""))
        if default:
            st.info(DEFAULT_NOTE, icon=":material/info:")
        questions = sample(items)
        key = (tuple(names), tuple(q.key for q in questions))
        found = st.session_state.get(keys.BENCH_CORPUS_CHECK)
        fit: TopicFit | None = found[1] if found and found[0] == key else None
        if st.button(
            f"Check them on {len(questions)} of these questions",
            icon=":material/fact_check:",
            key="bench.check_corpora",
            disabled=not questions,
            help="Retrieval only, no model: each question's best passage and how close it is to the question",
        ):
            _run_check(searching[0], questions, key)
            found = st.session_state.get(keys.BENCH_CORPUS_CHECK)
            fit = found[1] if found and found[0] == key else None
        if fit is not None:
            if fit.fits:
                st.success(f"On topic: {fit.line()}.", icon=":material/check_circle:")
            else:
                st.warning(
                    f"The corpora hold little on this benchmark's topics: {fit.line()}. Runs that retrieve "
                    "will mostly read off-topic passages.",
                    icon=":material/travel_explore:",
                )
        if default or (fit is not None and not fit.fits):
            _alternatives(names)
