"""Benchmark: methods and ablation presets over a MIRAGE-format benchmark, run in the background with progress per
arm; accuracy with intervals, accuracy against cost, paired tests, and every question down to its trace."""

from __future__ import annotations

import streamlit as st

from core.engine.llm import LLM, Endpoint
from core.engine.methods import get
from core.engine.retrieval import CorpusError
from core.engine.retrieval.corpus import corpus_sources
from core.engine.retrieval.default_corpus import default_corpus_paths
from core.studio.eval.plan import EvalPlan
from core.studio.eval.results import FINAL_ERRORS, ItemResult
from core.studio.eval.runner import finished_rows
from ui.benchmark.claims import claim_view
from ui.benchmark.corpora import corpora_check
from ui.benchmark.results import results
from ui.benchmark.run import current_job, progress_panel, start
from ui.benchmark.setup import Setup, setup_form
from ui.common import jobs, keys, state
from ui.common.chrome import header


def corpus_names() -> list[str]:
    """The names of the corpora a run would search (Settings' choice), without opening them."""
    override = st.session_state.get(keys.RETRIEVER_OVERRIDE)
    if override is not None:
        return list(override.corpora)
    selection = state.corpus_selection()
    try:
        return [s.name for s in corpus_sources(list(selection) if selection is not None else default_corpus_paths())]
    except (CorpusError, OSError):
        return []


def backend(choice: str) -> LLM:
    """What answers, as results are keyed by it: its name and the format an automatic knob stands for on it (the
    model is not started to say so)."""
    return LLM(Endpoint()) if choice == "embedded" else state.llm()


def _labels(plan: EvalPlan):
    labels = {arm.name: arm.label for arm in plan.arms}
    return lambda name: labels.get(name, name)


def _controls(setup: Setup, rows: list[ItemResult]) -> None:
    job = current_job()
    running = job is not None and job.running
    plan = setup.plan
    total = len(plan.items) * len(plan.arms)
    final = sum(r.status == "ok" or r.error_type in FINAL_ERRORS for r in rows)
    corpora = corpus_names() if any(get(arm.method).uses_retrieval for arm in plan.arms) else []
    searched = f" Corpora (from Settings): {', '.join(corpora)}." if corpora else ""
    st.markdown(
        f"{len(plan.items)} questions × {len(plan.arms)} arm(s) = **{total} runs**, {final} finished.{searched}"
    )
    go, stop, _ = st.columns([2, 1, 3])
    done = final >= total
    # short enough for its column at 1024 px ("Everything here is finished" was cut there)
    label = "Start" if not final else ("All finished" if done else f"Resume ({total - final} left)")
    clicked = go.button(
        label,
        type="primary",
        icon=":material/done_all:" if done else ":material/play_arrow:",
        key="bench.start",
        width="stretch",
        disabled=running or done,
        help="A benchmark is running; stop it first" if running else None,
    )
    if clicked and start(setup) is not None:
        st.rerun()
    if (
        running
        and jobs.may_stop(job)
        and stop.button("Stop", icon=":material/stop:", key="bench.stop", width="stretch")
    ):
        job.cancel()
        st.rerun()


def page() -> None:
    header(
        "Benchmark",
        "Methods and ablations over a MIRAGE-format benchmark: accuracy with 95% intervals, "
        "accuracy against cost, paired tests between methods, and every question down to its trace.",
    )
    views = ("Methods and ablations", "Check a paper's claim")
    if (
        state.kept(st.radio, "What to run", key="bench.view", default=views[0], options=views, horizontal=True)
        == views[1]
    ):
        claim_view(backend("settings"), corpus_names())
        return
    with st.container(border=True):
        setup = setup_form()
    rows: list[ItemResult] = []
    if setup.plan is not None:
        names = corpus_names()
        searching = list({a.method: get(a.method) for a in setup.plan.arms if get(a.method).uses_retrieval}.values())
        corpora_check(names, searching, setup.plan.items)
        llm = backend(setup.backend)
        configs = setup.plan.config_keys(llm.backend, names, llm.answer_format)
        rows = finished_rows(setup.plan, state.store(), configs)
        _controls(setup, rows)
    job = current_job()
    if job is not None:
        progress_panel(job)
    if setup.plan is None:
        return
    st.subheader("Results")
    st.caption(
        "Everything of this setup that has finished, here or with `python -m core eval` (same benchmark "
        "questions, knobs, backend and corpora)."
    )
    results(rows, setup.plan.items, _labels(setup.plan))
