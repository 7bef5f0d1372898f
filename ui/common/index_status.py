"""Index builds as jobs of the server's runner: the default corpus index, built in the background while the app
already answers, and the builds Settings starts for the corpora chosen there.

The first page view starts the build (it only loads the index when it is already built); the sidebar follows
its progress, and a method that reads the default corpus is told plainly that it has to wait, while methods
that need no corpus run at once. ``MEDRAG_BACKGROUND_INDEX=0`` turns this off: the corpus is then opened when
the first run needs it, as on an endpoint with indexes built ahead.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from core.engine.methods.contract import MethodSpec
from core.engine.retrieval.background import BackgroundBuild, BuildStatus
from ui.common import jobs, keys, state

REFRESH_SECONDS = 2
JOB = "default corpus index"  # its id in the server's job runner: one build per server


def enabled() -> bool:
    return state.settings().background_index


def build_id(selection: tuple[str, ...] | None) -> str:
    """The job id of the build that opens these corpora (``None``: the default corpus), one per server."""
    return JOB if selection is None else "index build: " + "|".join(selection)


def index_build(selection: tuple[str, ...] | None, *, again: bool = False) -> BackgroundBuild:
    """The build that opens these corpora in the pool every page uses, going or done, else started; with ``again``,
    a failed one is started anew (a click to try again; a page view never retries on its own)."""
    pool, job_id = state.retriever_pool(), build_id(selection)
    names = "Default corpus index" if selection is None else "Indexes: " + ", ".join(Path(p).name for p in selection)

    def make() -> BackgroundBuild:
        return BackgroundBuild(lambda progress: pool.get(selection, progress), names, job_id=job_id)

    return jobs.again_if_failed(job_id, BackgroundBuild, make) if again else jobs.runner().once(job_id, make)


def _build() -> BackgroundBuild:
    return index_build(None)


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


# -- a build Settings started, followed until it ends -----------------------------------------------------------------

CANNOT_STOP = (
    "An index build cannot be stopped midway: a half-built index would leave its corpus unusable until it is built "
    "again. It goes on if you leave this page; History › Running now lists it."
)


def building(selection: tuple[str, ...] | None) -> bool:
    """Whether the build that opens these corpora is going now (it is never started just to look)."""
    job = jobs.runner().get(build_id(selection), BackgroundBuild)
    return job is not None and not job.done


def follow_build() -> None:
    """The build Settings follows (one this session started, or one going when the page opened, so a reload finds it
    again) with its progress; once it ends, what came of it, said once."""
    job = jobs.runner().get(st.session_state.get(keys.INDEX_BUILD), BackgroundBuild)
    if job is None:
        going = jobs.runner().running(BackgroundBuild)
        if not going:
            return
        job = going[0]
        st.session_state[keys.INDEX_BUILD] = job.id
    if not job.done:
        st.fragment(_follow, run_every=REFRESH_SECONDS)(job.id)
        return
    del st.session_state[keys.INDEX_BUILD]
    if job.error:
        st.error(f"The indexes could not be built: {job.error}")
    else:
        st.success(f"Ready: {', '.join(job.result.corpora)}.")


def _follow(job_id: str) -> None:
    job = jobs.runner().get(job_id, BackgroundBuild)
    if job is None or job.done:
        st.rerun()  # the whole page: the corpora's statuses above change with it
    now = job.summary()
    st.progress(now.fraction or 0.0, text=f"{job.label} · {now.text}")
    st.caption(CANNOT_STOP)
