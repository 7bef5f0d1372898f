"""Runs a method in a background thread; the server keeps every run it started in one registry, by run id.

A page holds only the run's id (in ``st.session_state`` and in the page's URL, ``?run=``), so a rerun, a visit to
another page, a reload or a second tab finds the same live run again. The thread never touches Streamlit.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import streamlit as st

from core.llm import LLM
from core.methods import get
from core.methods.base import Retriever, RunContext
from core.question import Question
from core.runner import execute
from core.store import RunStore
from core.trace import Error, Event, Partial, Run

POLL_SECONDS = 0.4
STARTING_SECONDS = 10.0  # how long start() waits for the run to get its id (creating it is one store write)
KEEP_ENDED_SECONDS = 3600.0  # ended runs stay followable this long, then only the store has them


class LiveRun:
    """One method on one question in its own thread; ``events`` grows as the method emits them."""

    def __init__(self, method: str, question: Question, params: dict[str, Any], *, llm: LLM,
                 retriever: Retriever | None, store: RunStore):
        self.spec = get(method)
        self.question = question
        self.events: list[Event] = []
        self.writing: dict[tuple[str, str, float], Partial] = {}  # replies being written, by (stage, agent, start)
        self.run: Run | None = None
        self.started = time.time()
        self.ended: float | None = None
        self.stop_requested = False
        self._cancel = threading.Event()
        self._ctx: RunContext | None = None
        self._changed = threading.Condition()
        self._done = False
        self._thread = threading.Thread(
            target=self._work, args=(method, question, params, llm, retriever, store), daemon=True,
            name=f"studio-run-{method}",
        )

    def start(self) -> LiveRun:
        """Starts the thread and returns once the run exists (it has its id), or has already failed."""
        self._thread.start()
        with self._changed:
            self._changed.wait_for(lambda: self.run is not None or self._done, timeout=STARTING_SECONDS)
        return self

    @property
    def id(self) -> str:
        return self.run.id if self.run else ""

    @property
    def done(self) -> bool:
        return self._done

    @property
    def elapsed(self) -> float:
        end = self.run.finished if self.run and self.run.finished else time.time()
        return end - self.started

    def cancel(self) -> None:
        """Ends the run within about a second, even in the middle of a model call."""
        self.stop_requested = True
        self._cancel.set()

    def wait(self, seen: int, timeout: float = POLL_SECONDS) -> None:
        """Block until there are more than ``seen`` events, the run ends, or the timeout passes."""
        with self._changed:
            self._changed.wait_for(lambda: self._done or len(self.events) > seen, timeout=timeout)

    def until_done(self, timeout: float) -> bool:
        """Waits up to ``timeout`` seconds for the run to end; whether it has."""
        with self._changed:
            return self._changed.wait_for(lambda: self._done, timeout=timeout)

    def working(self) -> list[Partial]:
        """Replies being written now, oldest first (a method can have several agents writing at once)."""
        with self._changed:
            return sorted((p for p in self.writing.values() if not p.done), key=lambda p: p.started)

    # -- the worker thread ---------------------------------------------------------------
    def _partial(self, partial: Partial) -> None:
        with self._changed:
            key = (partial.stage, partial.agent, partial.started)
            if partial.done:
                self.writing.pop(key, None)
            else:
                self.writing[key] = partial

    def _sink(self, event: Event) -> None:
        with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    def _hook(self, ctx: RunContext) -> None:
        with self._changed:
            self._ctx = ctx
            self.run = ctx.run
            self._changed.notify_all()

    def _work(self, method, question, params, llm, retriever, store) -> None:
        try:
            self.run = execute(method, question, params, llm=llm, retriever=retriever, store=store,
                               sinks=[self._sink], ctx_hook=self._hook, stream_sinks=[self._partial],
                               cancel=self._cancel)
        except Exception as exc:  # noqa: BLE001 - the page must hear of it, whatever it is
            self._fail(exc)
        finally:
            with self._changed:
                self._done = True
                self.ended = time.time()
                self._changed.notify_all()

    def _fail(self, exc: Exception) -> None:
        """execute() keeps a method's failures in the trace itself; this covers one around it (a store error)."""
        run = self._ctx.run if self._ctx else Run(method=self.spec.name, question=self.question.text,
                                                  options=self.question.options)
        event = Event(run_id=run.id, seq=len(run.events), stage="failed", agent=self.spec.label,
                      payload=Error(message=f"{type(exc).__name__}: {exc}", error_type=type(exc).__name__))
        run.events.append(event)
        run.status, run.finished = "error", time.time()
        self.run = run
        self._sink(event)


class LiveRuns:
    """Every run this server started, by run id: any page or tab can follow or stop one."""

    def __init__(self):
        self._lock = threading.Lock()
        self._runs: dict[str, LiveRun] = {}

    def add(self, live: LiveRun) -> None:
        with self._lock:
            now = time.time()
            self._runs = {i: r for i, r in self._runs.items()
                          if not r.done or (r.ended or now) > now - KEEP_ENDED_SECONDS}
            if live.id:
                self._runs[live.id] = live

    def get(self, run_id: str | None) -> LiveRun | None:
        with self._lock:
            return self._runs.get(run_id or "")

    def running(self) -> list[LiveRun]:
        with self._lock:
            return [r for r in self._runs.values() if not r.done]


@st.cache_resource(show_spinner=False)
def live_runs() -> LiveRuns:
    return LiveRuns()
