"""Runs a method in a background thread and shows its events on the page as they arrive.

The run lives in ``st.session_state``, so a rerun (a click, a visit to another page and back) finds it
again and picks up where it was; the thread never touches Streamlit.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import streamlit as st

from core.cli.render import describe
from core.llm import LLM
from core.methods import get
from core.methods.base import Retriever, RunContext
from core.question import Question
from core.runner import execute
from core.store import RunStore
from core.trace import Error, Event, Run
from ui.text import md

POLL_SECONDS = 0.4


class LiveRun:
    """One method on one question in its own thread; ``events`` grows as the method emits them."""

    def __init__(self, method: str, question: Question, params: dict[str, Any], *, llm: LLM,
                 retriever: Retriever | None, store: RunStore):
        self.spec = get(method)
        self.question = question
        self.events: list[Event] = []
        self.run: Run | None = None
        self.started = time.time()
        self._ctx: RunContext | None = None
        self._changed = threading.Condition()
        self._done = False
        self._thread = threading.Thread(
            target=self._work, args=(method, question, params, llm, retriever, store), daemon=True,
            name=f"studio-run-{method}",
        )

    def start(self) -> LiveRun:
        self._thread.start()
        return self

    @property
    def done(self) -> bool:
        return self._done

    @property
    def elapsed(self) -> float:
        end = self.run.finished if self.run and self.run.finished else time.time()
        return end - self.started

    def cancel(self) -> None:
        if self._ctx is not None:
            self._ctx.cancel_event.set()

    def wait(self, seen: int, timeout: float = POLL_SECONDS) -> None:
        """Block until there are more than ``seen`` events, the run ends, or the timeout passes."""
        with self._changed:
            self._changed.wait_for(lambda: self._done or len(self.events) > seen, timeout=timeout)

    # -- the worker thread ---------------------------------------------------------------
    def _sink(self, event: Event) -> None:
        with self._changed:
            self.events.append(event)
            self._changed.notify_all()

    def _hook(self, ctx: RunContext) -> None:
        self._ctx = ctx
        self.run = ctx.run

    def _work(self, method, question, params, llm, retriever, store) -> None:
        try:
            self.run = execute(method, question, params, llm=llm, retriever=retriever, store=store,
                               sinks=[self._sink], ctx_hook=self._hook)
        except Exception as exc:  # noqa: BLE001 - the page must hear of it, whatever it is
            self._fail(exc)
        finally:
            with self._changed:
                self._done = True
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


# -- showing progress ----------------------------------------------------------------------


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _label(live: LiveRun) -> str:
    seconds = f"{live.elapsed:.0f} s"
    if not live.done:
        last = live.events[-1] if live.events else None
        doing = f"after {last.stage} · {last.agent}" if last else "waiting for the first step"
        return f"{live.spec.label}: running, {doing} · {_count(len(live.events), 'event')} · {seconds}"
    run = live.run
    if run is None or run.status == "error":
        return f"{live.spec.label}: failed after {seconds}"
    if run.status == "cancelled":
        return f"{live.spec.label}: stopped after {seconds}"
    t = run.totals
    return f"{live.spec.label}: done in {seconds} · {_count(t.calls, 'call')} · {t.tokens:,} tokens"


def _state(live: LiveRun) -> str:
    if not live.done:
        return "running"
    return "complete" if live.run is not None and live.run.status == "ok" else "error"


def _line(event: Event) -> str:
    return md(describe(event))


def follow(lives: list[LiveRun], slots: list[Any]) -> None:
    """Show every run's events in its slot (a container) as they arrive, until all runs end.

    Each slot gets an ``st.status`` whose label names the step in progress and its elapsed time.
    """
    boxes = []
    for live, slot in zip(lives, slots):
        with slot:
            boxes.append(st.status(_label(live), state=_state(live), expanded=not live.done))
    shown = [0] * len(lives)
    while True:
        ended = [live.done for live in lives]  # read first: once a run has ended, all its events are in
        for i, (live, box) in enumerate(zip(lives, boxes)):
            new = live.events[shown[i]:]
            for event in new:
                box.markdown(_line(event))
            shown[i] += len(new)
            box.update(label=_label(live), state=_state(live), expanded=not live.done)
        if all(ended):
            return
        running = ended.index(False)
        lives[running].wait(shown[running])
