"""The top of Ask or Compare when it shows runs already asked (a link, a reload, History, a run just started): their
own method(s), knobs, question and options, read-only, so nothing on screen belongs to another question. "Ask again"
opens the form filled with them, to change and run; "New question" opens it empty."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.engine.methods import registry
from core.engine.trace import Run
from ui.common.knobs import changed_knobs, method_label
from ui.common.text import md


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
