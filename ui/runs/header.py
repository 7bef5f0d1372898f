"""The top of Ask or Compare when it shows runs already asked (a link, a reload, History, a run just started): their
own method(s), knobs, question and options, read-only, so nothing on screen belongs to another question. "Ask again"
opens the form filled with them, to change and run; "New question" opens it empty."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import streamlit as st

from core.engine.methods import registry
from core.engine.trace import Run
from ui.common import state
from ui.common.knobs import changed_knobs, method_label
from ui.common.text import md

FRESH_SEEDS = 100_000  # a fresh run's seed is drawn below this (a sampled call's seed is the run's × 1,000 + offset)


def question_block(question: str, options: dict[str, str], *, key: str) -> None:
    """A question and its options as asked, read-only."""
    with st.container(border=True, key=f"{key}-asked"):
        st.caption("Question, as asked (read-only)")
        st.markdown(md(question) if question.strip() else ":gray[(no text)]")
        if options:
            st.markdown("\n".join(f"- **{md(k)}**\\. {md(v)}" for k, v in options.items()))
        else:
            st.caption("Free text: no options")


def method_block(run: Run) -> None:
    """A run's method and the knobs it ran with, read-only."""
    spec = registry().get(run.method)
    st.markdown(f"**Method** · {md(method_label(run.method))}")
    if spec is not None:
        badge = ":blue-badge[searches the corpus]" if spec.uses_retrieval else ":gray-badge[no corpus needed]"
        st.markdown(f"{badge} :gray[{spec.description}]")
    st.caption(
        f"Knobs: {changed_knobs(run.method, run.params)}" + (f" · corpus {', '.join(run.corpus)}" if run.corpus else "")
    )


def again_buttons(*, key: str, again: Callable[[], None], new: Callable[[], None], disabled: bool = False) -> None:
    """Ask again (the form filled with what is shown) and New question (the form empty)."""
    left, right = st.columns(2)
    left.button(
        "Ask again",
        icon=":material/edit:",
        key=f"{key}.again",
        on_click=again,
        width="stretch",
        disabled=disabled,
        help="Opens the form with this method, its knobs and this question, to change "
        "and run; this run stays saved in History",
    )
    right.button(
        "New question",
        icon=":material/add:",
        key=f"{key}.new",
        on_click=new,
        width="stretch",
        disabled=disabled,
        help="Opens an empty form; this run stays saved in History",
    )


def samples(method: str) -> bool:
    """Whether some of the method's agents sample (it has a seed knob): asked afresh, they draw with a new seed."""
    spec = registry().get(method)
    return spec is not None and "seed" in spec.params.model_fields


def fresh_knobs(run: Run) -> dict:
    """The run's knobs for asking it afresh: a new seed where the method samples, the same knobs where it is greedy."""
    if not samples(run.method):
        return dict(run.params)
    return {**run.params, "seed": random.randrange(1, FRESH_SEEDS)}


def cached_notice(runs: list[Run], *, key: str, disabled: bool = False) -> bool:
    """For runs served whole from the response cache: says so, when and in how long their replies were recorded,
    with "Run fresh" beside it; True when it was clicked. Nothing for runs that reached the model."""
    repeats = [run for run in runs if run.status == "ok" and run.totals.cached]
    if not repeats:
        return False
    lines = []
    for run in repeats:
        made = state.store().recorded_by(run)
        recorded = (
            f"recorded {time.strftime('%Y-%m-%d %H:%M', time.localtime(made.finished or made.started))}, "
            f"took {made.totals.seconds:.0f} s"
            if made is not None
            else "recorded by an earlier run not in this studio's history"
        )
        who = f"{method_label(run.method)}: " if len(runs) > 1 else ""
        lines.append(f"{who}Served from the cache — {recorded}")
    sampled = [method_label(run.method) for run in repeats if samples(run.method)]
    greedy = [method_label(run.method) for run in repeats if not samples(run.method)]
    fresh = []
    if sampled:
        fresh.append(f"{', '.join(sampled)}: a new seed, so its sampling agents draw new replies")
    if greedy:
        fresh.append(f"{', '.join(greedy)}: greedy (temperature 0), so the model writes the same reply again")
    with st.container(border=True, key=f"{key}-cached"):
        st.markdown(":material/bolt: " + "  \n".join(lines))
        clicked = st.button(
            "Run fresh",
            icon=":material/refresh:",
            key=f"{key}.fresh",
            disabled=disabled,
            help="Runs the same method, knobs and question again on the model, not from the cache",
        )
        st.caption(
            "Run fresh asks the model again, bypassing the cache (it takes the time a live run takes). "
            + "; ".join(fresh)
            + "."
        )
    return clicked
