"""Starting runs from a page: check the input, get the model and corpus ready (with progress), start threads.

Every problem is said on the page in plain words and nothing is started; the page keeps working.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.engine.live_run import LiveRun
from core.engine.llm import LLM, Endpoint
from core.engine.llm.embedded import EmbeddedServer
from core.engine.methods.contract import MethodSpec
from core.studio.access import Access, Action
from ui.common import access as session_access
from ui.common import index_status, jobs, keys, state
from ui.common.knobs import check_knobs
from ui.runs.question_form import parse_question

WAIT_SECONDS = 0.5  # how often a page waiting for the model's start redraws its progress


@st.cache_resource(show_spinner=False)
def _embedded_llm() -> LLM:
    return LLM(Endpoint())


def llm_for(access: Access) -> LLM:
    """The owner's configured model; a visitor's runs go to the embedded model, never to the owner's endpoint."""
    if access.may(Action.USE_ENDPOINT) or st.session_state.get(keys.LLM_OVERRIDE) is not None:
        return state.llm()
    return _embedded_llm()


def runs_go_to(access: Access) -> str:
    """Where this session's runs go, in a few words: 'the embedded model (qwen2.5-…)' or 'the LLM endpoint at
    https://… (gpt-4o)'. Asked of the model its runs are sent to, so a visitor is never shown the owner's endpoint."""
    current = llm_for(access)
    return f"{current.where} ({current.model_name})" if current.model_name else current.where


def admit(access: Access, runs: list[LiveRun]) -> bool:
    """Starts ``runs`` (live runs or what-if re-runs, made with ``owner=client_key()``) when this client may have
    that many more going now (the owner's limit per visitor counts every tab of one client); else says why."""
    problem = jobs.runner().admit(
        runs, counting=LiveRun, refusal=lambda going: access.live_run_refusal(going, len(runs))
    )
    if problem:
        st.error(problem, icon=":material/lock:")
    return problem is None


def embedded_server() -> EmbeddedServer | None:
    """The running embedded server, if this process started one (it is never started just to look)."""
    return EmbeddedServer.current()


def start_model() -> bool:
    """Assemble (first time) and load the embedded model, waiting here with its progress; False if it cannot. The
    start is a job of the server's runner: a start another page or tab began is waited for, not begun again."""
    job = jobs.model_start()
    with st.status("Starting the embedded model (once per server start)…", expanded=True) as box:
        bar = st.progress(0.0, text="checking the model file")
        while not job.until_done(WAIT_SECONDS):
            now = job.summary()
            bar.progress(now.fraction or 0.0, text=now.text)
        if job.error:
            box.update(label="The embedded model could not start", state="error")
            st.error(job.error)
            return False
        bar.progress(1.0, text="loaded")
        box.update(
            label=f"Embedded model ready (loaded in {job.result.load_seconds:.0f} s)", state="complete", expanded=False
        )
    return True


def ensure_model(access: Access | None = None) -> bool:
    """Start the embedded model before the first run that needs it."""
    if st.session_state.get(keys.LLM_OVERRIDE) is not None or embedded_server() is not None:
        return True
    embedded = state.uses_embedded_model() if access is None else llm_for(access).endpoint.embedded
    return start_model() if embedded else True


def open_retriever_for(spec: MethodSpec) -> tuple[Any, str | None]:
    """The corpus this method searches (Settings' choice), indexes built first with a progress bar; or why not."""
    if not spec.uses_retrieval:
        return None, None
    if waiting := index_status.corpus_not_ready(spec):
        return None, waiting
    bar = st.empty()
    try:
        retriever = state.retriever_for(spec, progress=state.bar_progress(bar))
    except (OSError, ValueError, RuntimeError) as exc:
        return None, f"The corpus could not be opened: {exc}"
    finally:
        bar.empty()
    return retriever, None


def start(
    chosen: list[tuple[MethodSpec, dict[str, Any]]], text: str, options: dict[str, str] | None, *, fresh: bool = False
) -> list[LiveRun]:
    """One live run per (method, knob values) on the same question, or none and a message saying why.

    ``options`` is None for a free-text question; an empty dict is a multiple-choice question with no options yet.
    ``fresh``: every call goes to the model, none is served from the response cache.
    Started runs are in the server's job runner (``ui/common/jobs.py``), so any page or tab can follow them.
    """
    access = session_access.current()
    if not session_access.allowed(Action.LIVE_RUN):
        return []
    question, problems = parse_question(text, options)
    params = {}
    for spec, values in chosen:
        checked, problem = check_knobs(spec, values)
        if problem:
            problems.append(problem)
        else:
            params[spec.name] = checked.model_dump()
    if problems:
        for problem in problems:
            st.error(problem)
        return []
    retrievers = {}
    for spec, _ in chosen:
        retrievers[spec.name], problem = open_retriever_for(spec)
        if problem:
            st.error(problem)
            return []
    if not ensure_model(access):
        return []
    llm, store, owner = llm_for(access), state.store(), session_access.client_key()
    llm = llm.fresh() if fresh else llm
    lives = [
        LiveRun(
            spec.name, question, params[spec.name], llm=llm, retriever=retrievers[spec.name], store=store, owner=owner
        )
        for spec, _ in chosen
    ]
    if not admit(access, lives):
        return []
    session_access.started([live.id for live in lives])
    return lives
