"""What the screens share: the LLM, retriever and run store (one per process, ``st.cache_resource``) and
each user's settings (``st.session_state``).

Tests inject a scripted LLM or a fixed retriever by putting it in ``st.session_state[LLM_OVERRIDE]`` or
``st.session_state[RETRIEVER_OVERRIDE]`` before the page runs; nothing else changes for them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.errors import StreamlitSecretNotFoundError

from core import paths
from core.llm import LLM, Endpoint
from core.methods.base import MethodSpec, Retriever
from core.retrieval import open_retriever
from core.retrieval.progress import stage_line
from core.store import RunStore

LLM_OVERRIDE = "llm_override"
RETRIEVER_OVERRIDE = "retriever_override"
ENDPOINT = "settings.endpoint"  # {"embedded": bool, "base_url": str, "model": str, "timeout": float}
KNOB_DEFAULTS = "settings.knobs"  # {method name: {knob: value}}
CORPORA = "settings.corpora"  # list of corpus paths; None means the default corpus
KEY_NAMES = ("MEDRAG_API_KEY", "OPENAI_API_KEY")

Progress = Callable[[str, int, int], None]  # (stage, done, total)


def bar_progress(bar: Any) -> Progress:
    """Index work reported on a Streamlit progress bar (``st.progress`` or a placeholder), one line per stage."""
    def report(stage: str, done: int, total: int) -> None:
        bar.progress(min(done / total, 1.0) if total else 0.0, text=stage_line(stage, done, total))
    return report


# -- configuration: Streamlit secrets first, then the environment ---------------------------


def _secrets() -> dict[str, str]:
    try:
        return {k: str(v) for k, v in st.secrets.items() if isinstance(v, str | int | float)}
    except (FileNotFoundError, StreamlitSecretNotFoundError):
        return {}


def config() -> dict[str, str]:
    return {**os.environ, **_secrets()}


def api_key_source() -> str | None:
    """Where the API key comes from ("secrets" or "environment"), never the key itself."""
    secrets = _secrets()
    if any(secrets.get(name) for name in KEY_NAMES):
        return "Streamlit secrets"
    if any(os.environ.get(name) for name in KEY_NAMES):
        return "the environment"
    return None


def endpoint_settings() -> dict[str, Any]:
    if ENDPOINT not in st.session_state:
        start = Endpoint.from_env(config())
        st.session_state[ENDPOINT] = {"embedded": start.embedded, "base_url": start.base_url or "",
                                      "model": start.model, "timeout": start.timeout,
                                      "context_window": start.context_window or 0}
    return st.session_state[ENDPOINT]


def endpoint() -> Endpoint:
    chosen = endpoint_settings()
    env = Endpoint.from_env(config())
    if chosen["embedded"]:
        return Endpoint(timeout=chosen["timeout"], max_retries=env.max_retries)
    return Endpoint(base_url=chosen["base_url"].strip() or None, model=chosen["model"].strip(),
                    api_key=env.api_key, timeout=chosen["timeout"], max_retries=env.max_retries,
                    context_window=int(chosen.get("context_window") or 0) or None)


# -- shared resources -----------------------------------------------------------------------


@st.cache_resource(show_spinner=False)
def _llm(endpoint: Endpoint) -> LLM:
    return LLM(endpoint)


def llm() -> LLM:
    if (override := st.session_state.get(LLM_OVERRIDE)) is not None:
        return override
    return _llm(endpoint())


def probe_llm() -> LLM:
    """The configured LLM without the response cache, so a connection test really reaches the endpoint."""
    if (override := st.session_state.get(LLM_OVERRIDE)) is not None:
        return override
    return LLM(endpoint(), cache_mode="off")


def runs_go_to() -> str:
    """Where this session's runs go, in a few words: 'the embedded model (qwen2.5-…)' or 'the LLM endpoint at
    https://… (gpt-4o)'. The one place pages learn it, so a new kind of backend needs saying here only."""
    current = llm()
    return f"{current.where} ({current.model_name})" if current.model_name else current.where


def uses_embedded_model() -> bool:
    return st.session_state.get(LLM_OVERRIDE) is None and endpoint().embedded


@st.cache_resource(show_spinner=False)
def _store(path: str) -> RunStore:
    return RunStore(path)


def store() -> RunStore:
    return _store(str(paths.db_path()))


class RetrieverPool:
    """Open retrievers by corpus selection, shared by every session; opening may build indexes."""

    def __init__(self):
        self._lock = threading.Lock()
        self._open: dict[tuple[str, ...] | None, Retriever] = {}

    def get(self, corpora: tuple[str, ...] | None, progress: Progress | bool = False) -> Retriever:
        """``None`` is the default corpus."""
        if corpora == ():
            raise RuntimeError("no corpus is enabled; enable one in Settings → Corpora")
        with self._lock:
            if corpora not in self._open:
                paths_ = None if corpora is None else [Path(p) for p in corpora]
                self._open[corpora] = open_retriever(paths_, progress=progress)
            return self._open[corpora]

    def is_open(self, corpora: tuple[str, ...] | None) -> bool:
        return corpora in self._open


@st.cache_resource(show_spinner=False)
def retriever_pool() -> RetrieverPool:
    return RetrieverPool()


def corpus_selection() -> tuple[str, ...] | None:
    """The enabled corpora's paths; ``None`` while the user has not changed the default corpus."""
    chosen = st.session_state.get(CORPORA)
    return None if chosen is None else tuple(chosen)


def retriever_for(spec: MethodSpec, progress: Progress | bool = False) -> Retriever | None:
    if not spec.uses_retrieval:
        return None
    if (override := st.session_state.get(RETRIEVER_OVERRIDE)) is not None:
        return override
    return retriever_pool().get(corpus_selection(), progress)


def knob_defaults(method: str) -> dict[str, Any]:
    return st.session_state.setdefault(KNOB_DEFAULTS, {}).get(method, {})


# -- widgets whose value survives a visit to another page ----------------------------------


def kept(widget: Callable[..., Any], label: str, *, key: str, default: Any, **kwargs: Any) -> Any:
    """Streamlit forgets a widget's value when its page is not shown; this keeps a copy and restores it.

    The copy goes in as the widget's own starting value (``value``, ``index`` or ``default``), not written into
    the widget's session-state key first: a click that interrupts a page's first, slow run (a cold server) could
    otherwise leave the widget at its type's blank (an empty multiselect, a number input at its minimum). Keyed
    widgets keep their identity when that starting value changes, so it only matters when the widget is new."""
    copy = f"kept:{key}"
    start = st.session_state.get(copy, default)
    kind = getattr(widget, "__name__", "")
    if kind in ("radio", "selectbox"):
        options = list(kwargs["options"])
        kwargs["index"] = options.index(start) if start in options else 0
    elif kind == "multiselect":
        kwargs["default"] = [v for v in start or [] if v in kwargs["options"]]
    else:
        kwargs["value"] = start
    value = widget(label, key=key, **kwargs)
    st.session_state[copy] = value
    return value


def preset(key: str, value: Any) -> None:
    """The value a kept widget that is not on screen now starts from the next time it is drawn (its own state goes,
    so Streamlit does not warn about a widget given both a value and a state)."""
    st.session_state.pop(key, None)
    st.session_state[f"kept:{key}"] = value


def set_kept(key: str, value: Any) -> None:
    """Change a kept widget's value from a callback (before the widget is drawn again)."""
    st.session_state[key] = value
    st.session_state[f"kept:{key}"] = value
