"""The Benchmark page's setup: which benchmark and questions (``questions``), which methods and ablation presets
(``arms``), how many at once and on which backend. Nothing runs until all is usable."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.studio.eval import BenchItem, BenchmarkError, EvalPlan
from ui.benchmark.arms import arms
from ui.benchmark.questions import benchmark, questions, whole_number
from ui.common import keys, state

BACKENDS = ("settings", "embedded")


@dataclass
class Setup:
    plan: EvalPlan | None  # None while something is unusable
    bench_name: str = ""
    concurrency: int = 1
    backend: str = "settings"


def backend_label(choice: str) -> str:
    if choice == "embedded":
        return "Embedded model"
    if st.session_state.get(keys.LLM_OVERRIDE) is not None:
        return f"Settings: {state.llm().model_name}"
    ep = state.endpoint()
    return "Settings: embedded model" if ep.embedded else f"Settings: {ep.model or 'endpoint'} at {ep.base_url}"


def setup_form() -> Setup:
    problems: list[str] = []
    # Two columns, the run's settings in a row beneath: three columns leave each under 220 px at 1024 px.
    which, arms_column = st.columns(2, gap="large")
    items: list[BenchItem] = []
    with which:
        st.markdown("**Questions**")
        bench, name, problem = benchmark()
        if problem:
            st.error(problem)
            problems.append(problem)
        else:
            try:
                items = questions(bench)
            except BenchmarkError as exc:
                st.error(str(exc))
                problems.append(str(exc))
    with arms_column:
        st.markdown("**Methods and ablations**")
        arm_problems: list[str] = []
        methods, params, presets = arms(arm_problems)
        for problem in arm_problems:
            st.error(problem)
        problems += arm_problems
    st.markdown("**Run**")
    at_once, on = st.columns(2, gap="large")
    with at_once:
        concurrency = whole_number(
            st,
            "Questions at once",
            "bench.concurrency",
            2,
            minimum=1,
            max_value=64,
            help="Runs in flight together (the embedded model serves a few; an endpoint with many slots serves more)",
        )
    offered = list(BACKENDS) if not state.uses_embedded_model() else ["settings"]
    labels = {choice: backend_label(choice) for choice in offered}
    with on:
        backend = state.kept(
            st.radio,
            "Backend",
            key="bench.backend",
            default="settings",
            options=offered,
            format_func=labels.__getitem__,
        )
    if problems or not items:
        return Setup(None, name, concurrency, backend)
    return Setup(EvalPlan(methods=methods, items=items, params=params, presets=presets), name, concurrency, backend)
