"""The default corpus index, built in the background while the app already answers.

The first page view starts the build (it only loads the index when it is already built); the sidebar follows
its progress, and a method that reads the default corpus is told plainly that it has to wait, while methods
that need no corpus run at once. ``MEDRAG_BACKGROUND_INDEX=0`` turns this off: the corpus is then opened when
the first run needs it, as on an endpoint with indexes built ahead.
"""

from __future__ import annotations

import streamlit as st

from core.methods.base import MethodSpec
from core.retrieval.background import BackgroundBuild, BuildStatus
from ui.common import jobs
from ui.common import state
from ui.common import keys

REFRESH_SECONDS = 2
JOB = "default corpus index"  # its id in the server's job runner: one build per server


def enabled() -> bool:
    return state.settings().background_index


def _build() -> BackgroundBuild:
    pool = state.retriever_pool()  # the build opens the default corpus in the pool every page uses
    return jobs.runner().once(
        JOB, lambda: BackgroundBuild(lambda progress: pool.get(None, progress), "Default corpus index", job_id=JOB)
    )


def status() -> BuildStatus | None:
    return _build().status() if enabled() else None


def sidebar() -> None:
    """Start the build on the first page view and show it in the sidebar until the corpus is ready."""
    if not enabled():
        return
    with st.sidebar:
        if _build().status().state == "ready":
            st.caption(":material/check_circle: Default corpus index ready")
        else:
            _progress()


@st.fragment(run_every=REFRESH_SECONDS)
def _progress() -> None:
    current = _build().status()
    if current.state == "ready":
        st.rerun()  # the whole page, so screens waiting for the corpus redraw
    if current.state == "failed":
        st.error(f"The default corpus index could not be built: {current.error}")
        return
    verb = "Opening" if current.only_opening else "Building"
    st.progress(current.fraction, text=f"{verb} the default corpus index · {current.describe()}")
    st.caption(
        "Seconds when the index was built before; a run that reads the corpus waits for it."
        if current.only_opening
        else "CoT needs no corpus and answers now; methods that read the corpus can start when this is done."
    )


def corpus_not_ready(spec: MethodSpec) -> str | None:
    """Why ``spec`` cannot start yet: it reads the default corpus and its index is still being built."""
    if (
        not spec.uses_retrieval
        or st.session_state.get(keys.RETRIEVER_OVERRIDE) is not None
        or state.corpus_selection() is not None
    ):
        return None
    current = status()
    if current is None or current.state == "ready" or current.only_opening:
        return None  # ready, or only opening a built index: the run waits the few seconds that takes
    if current.state == "failed":
        return f"{spec.label} needs the default corpus, whose index could not be built: {current.error}"
    return (
        f"{spec.label} needs the default corpus, whose index is still being built ({current.describe()}). "
        f"Methods that need no corpus, such as CoT, answer now; start {spec.label} once the sidebar says "
        "the index is ready."
    )
