"""Starting runs from a page: check the input, get the model and corpus ready (with progress), start threads.

Every problem is said on the page in plain words and nothing is started; the page keeps working.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

import streamlit as st

from core.access import Access, Action
from core.llm import LLM, Endpoint
from core.llm.embedded import EmbeddedServer, ModelAssemblyError
from core.methods.base import MethodSpec
from ui import access as session_access
from ui import index_status, state
from ui.knobs import check_knobs
from ui.live import LiveRun, live_runs
from ui.question_form import parse_question


class Going(Protocol):
    @property
    def done(self) -> bool: ...


class LiveQuota:
    """Live runs going per visitor (every tab of one client together), counted and started under one lock so two
    clicks at once cannot both pass the owner's limit."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, list[Going]] = {}

    def admit(self, key: str, access: Access, more: int,
              begin: Callable[[], list[Going]]) -> tuple[list[Going], str | None]:
        """``begin()``'s runs, or none and why not."""
        with self._lock:
            going = [r for r in self._runs.get(key, []) if not r.done]
            if problem := access.live_run_refusal(len(going), more):
                return [], problem
            started = begin()
            self._runs[key] = going + started
            return started, None


@st.cache_resource(show_spinner=False)
def quota() -> LiveQuota:
    return LiveQuota()


@st.cache_resource(show_spinner=False)
def _embedded_llm() -> LLM:
    return LLM(Endpoint())


def llm_for(access: Access) -> LLM:
    """The owner's configured model; a visitor's runs go to the embedded model, never to the owner's endpoint."""
    if access.may(Action.USE_ENDPOINT) or st.session_state.get(state.LLM_OVERRIDE) is not None:
        return state.llm()
    return _embedded_llm()


def admit(access: Access, more: int, begin: Callable[[], list[Going]]) -> list[Going]:
    """``begin()``'s live runs when this session may start ``more`` now; else none, and why on the page."""
    started, problem = quota().admit(session_access.client_key(), access, more, begin)
    if problem:
        st.error(problem, icon=":material/lock:")
    return started


def embedded_server() -> EmbeddedServer | None:
    """The running embedded server, if this process started one (it is never started just to look)."""
    return EmbeddedServer.current()


def start_model() -> bool:
    """Assemble (first time) and load the embedded model, with progress on the page; False if it cannot."""
    with st.status("Starting the embedded model (once per server start)…", expanded=True) as box:
        bar = st.progress(0.0, text="checking the model file")

        def assembling(done: int, total: int) -> None:
            bar.progress(min(done / total, 1.0), text=f"assembling the model: {done >> 20:,} of {total >> 20:,} MiB")

        try:
            server = EmbeddedServer.get(progress=assembling)
        except (ModelAssemblyError, OSError) as exc:
            box.update(label="The embedded model could not start", state="error")
            st.error(f"{exc}")
            return False
        bar.progress(1.0, text="loaded")
        box.update(label=f"Embedded model ready (loaded in {server.load_seconds:.0f} s)", state="complete",
                   expanded=False)
    return True


def ensure_model(access: Access | None = None) -> bool:
    """Start the embedded model before the first run that needs it."""
    if st.session_state.get(state.LLM_OVERRIDE) is not None or embedded_server() is not None:
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


def start(chosen: list[tuple[MethodSpec, dict[str, Any]]], text: str, options: dict[str, str] | None) -> list[LiveRun]:
    """One live run per (method, knob values) on the same question, or none and a message saying why.

    ``options`` is None for a free-text question; an empty dict is a multiple-choice question with no options yet.
    Started runs are in the server's registry (``live_runs``), so any page or tab can follow them.
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
    llm, store, registry = llm_for(access), state.store(), live_runs()

    def begin() -> list[LiveRun]:
        lives = [LiveRun(spec.name, question, params[spec.name], llm=llm, retriever=retrievers[spec.name],
                         store=store).start() for spec, _ in chosen]
        for live in lives:
            registry.add(live)
        return lives

    lives = admit(access, len(chosen), begin)
    session_access.started([live.id for live in lives])
    return lives
