"""What the screens share: the LLM, retriever and run store (one per process, ``st.cache_resource``) and
each user's settings (``st.session_state``).

Tests inject a scripted LLM or a fixed retriever by putting it in ``st.session_state[keys.LLM_OVERRIDE]`` or
``st.session_state[keys.RETRIEVER_OVERRIDE]`` before the page runs; nothing else changes for them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.errors import StreamlitSecretNotFoundError

from core.engine import paths
from core.engine.llm import LLM, Endpoint, profiles
from core.engine.llm.endpoint import server_key
from core.engine.methods.contract import MethodSpec
from core.engine.retrieval import open_retriever
from core.engine.retrieval.progress import stage_line
from core.engine.retrieval.retriever import Retriever
from core.engine.settings import Settings
from core.engine.settings import settings as read_settings
from core.engine.store import RunStore
from ui.common import keys

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


def settings() -> Settings:
    """The settings as the app reads them: ``.streamlit/secrets.toml`` over the environment."""
    return read_settings(**_secrets())


def key_source(name: str) -> str:
    """Where a configured key is read from, never the key itself."""
    return "Streamlit secrets" if _secrets().get(name) else "the environment"


def endpoint_settings() -> dict[str, Any]:
    if keys.ENDPOINT not in st.session_state:
        start = Endpoint.from_settings(settings())
        st.session_state[keys.ENDPOINT] = {
            "embedded": start.embedded,
            "base_url": start.base_url or "",
            "model": start.model,
            "provider": start.provider or "",
            "timeout": start.timeout,
            "context_window": start.context_window or 0,
            "reasoning_effort": start.reasoning_effort,
        }
    return st.session_state[keys.ENDPOINT]


def server_key_for(base_url: str | None, model: str, provider: str | None) -> tuple[str, str] | None:
    """The server's own key for this endpoint and the name it is configured under (``core.engine.llm.endpoint.server_key``:
    a key goes only to the endpoint it was configured for)."""
    return server_key(base_url, profiles.resolve(base_url, model, provider), settings())


def endpoint() -> Endpoint:
    """This session's endpoint. The API key is the server's own only where it was configured for this endpoint;
    anywhere else it is the key this session typed, if any, which lives in its memory alone."""
    chosen = endpoint_settings()
    env = Endpoint.from_settings(settings())
    if chosen["embedded"]:
        return Endpoint(timeout=chosen["timeout"], max_retries=env.max_retries)
    base_url, model = chosen["base_url"].strip() or None, chosen["model"].strip()
    provider = chosen.get("provider") or None
    key = server_key_for(base_url, model, provider)
    return Endpoint(
        base_url=base_url,
        model=model,
        provider=provider,
        api_key=key[0] if key else st.session_state.get(keys.SESSION_KEY, ""),
        timeout=chosen["timeout"],
        max_retries=env.max_retries,
        context_window=int(chosen.get("context_window") or 0) or None,
        reasoning_effort=chosen.get("reasoning_effort"),
    )


# -- shared resources -----------------------------------------------------------------------


@st.cache_resource(show_spinner=False)
def _llm(endpoint: Endpoint) -> LLM:
    return LLM(endpoint)


def llm() -> LLM:
    if (override := st.session_state.get(keys.LLM_OVERRIDE)) is not None:
        return override
    return _llm(endpoint())


def probe_llm() -> LLM:
    """The configured LLM without the response cache, so a connection test really reaches the endpoint."""
    if (override := st.session_state.get(keys.LLM_OVERRIDE)) is not None:
        return override
    return LLM(endpoint(), cache_mode="off")


def uses_embedded_model() -> bool:
    return st.session_state.get(keys.LLM_OVERRIDE) is None and endpoint().embedded


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
    chosen = st.session_state.get(keys.CORPORA)
    return None if chosen is None else tuple(chosen)


def retriever_for(spec: MethodSpec, progress: Progress | bool = False) -> Retriever | None:
    if not spec.uses_retrieval:
        return None
    if (override := st.session_state.get(keys.RETRIEVER_OVERRIDE)) is not None:
        return override
    return retriever_pool().get(corpus_selection(), progress)


def knob_defaults(method: str) -> dict[str, Any]:
    return st.session_state.setdefault(keys.KNOB_DEFAULTS, {}).get(method, {})


# -- widgets whose value survives a visit to another page ----------------------------------


def kept(widget: Callable[..., Any], label: str, *, key: str, default: Any, **kwargs: Any) -> Any:
    """Streamlit forgets a widget's value when its page is not shown; this keeps a copy and restores it.

    The copy goes in as the widget's own starting value (``value``, ``index`` or ``default``), not written into
    the widget's session-state key first: a click that interrupts a page's first, slow run (a cold server) could
    otherwise leave the widget at its type's blank (an empty multiselect, a number input at its minimum). Keyed
    widgets keep their identity when that starting value changes, so it only matters when the widget is new."""
    copy = keys.kept(key)
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
    st.session_state[keys.kept(key)] = value


def set_kept(key: str, value: Any) -> None:
    """Change a kept widget's value from a callback (before the widget is drawn again)."""
    st.session_state[key] = value
    st.session_state[keys.kept(key)] = value
