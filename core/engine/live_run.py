"""A method on a question as a job: its events are readable while it runs, replies being written show as they are
written, and a cancel ends it within about a second, even in the middle of a model call.

Its job id is the run's id, so a page that names the run (``?run=``) finds the live run in the runner.
"""

from __future__ import annotations

import time
from typing import Any

from core.engine.jobs import Job, JobProgress, Status
from core.engine.llm import LLM
from core.engine.methods import get
from core.engine.methods.contract import RunContext
from core.engine.question import Question
from core.engine.retrieval.retriever import Retriever
from core.engine.runner import execute
from core.engine.stages import Runner
from core.engine.store import RunStore
from core.engine.trace import Error, Event, Partial, Run

POLL_SECONDS = 0.4
STARTING_SECONDS = 10.0  # how long start() waits for the run to get its id (creating it is one store write)
ENDED_AS: dict[str, Status] = {"ok": "finished", "cancelled": "stopped"}  # any other run status: failed


class LiveRun(Job):
    """One method on one question in its own thread; ``events`` grows as the method emits them."""

    kind = "live run"

    def __init__(
        self,
        method: str,
        question: Question,
        params: dict[str, Any],
        *,
        llm: LLM,
        retriever: Retriever | None,
        store: RunStore,
        owner: str = "",
    ):
        self.spec = get(method)
        super().__init__(self.spec.label, detail=question.text, owner=owner)
        self.question, self.params = question, params
        self.llm, self.retriever, self.store = llm, retriever, store
        self.events: list[Event] = []
        self.writing: dict[tuple[str, str, float], Partial] = {}  # replies being written, by (stage, agent, start)
        self.run: Run | None = None
        self._ctx: RunContext | None = None

    def start(self) -> LiveRun:
        """Starts the thread and returns once the run exists (it has its id), or has already failed."""
        super().start()
        with self._changed:
            self._changed.wait_for(lambda: self.run is not None or self.done, timeout=STARTING_SECONDS)
        return self

    @property
    def id(self) -> str:
        return self.run.id if self.run else ""

    @property
    def elapsed(self) -> float:
        end = self.run.finished if self.run and self.run.finished else time.time()
        return end - self.started

    def summary(self) -> JobProgress:
        last = self.events[-1] if self.events else None
        doing = f"after {last.stage} · {last.agent}" if last else "starting its first step"
        return JobProgress(f"{doing} · {len(self.events)} event{'' if len(self.events) == 1 else 's'}")

    def wait(self, seen: int, timeout: float = POLL_SECONDS) -> None:
        """Block until there are more than ``seen`` events, the run ends, or the timeout passes."""
        with self._changed:
            self._changed.wait_for(lambda: self.done or len(self.events) > seen, timeout=timeout)

    def working(self) -> list[Partial]:
        """Replies being written now, oldest first (a method can have several agents writing at once)."""
        with self._changed:
            return sorted((p for p in self.writing.values() if not p.done), key=lambda p: p.started)

    # -- the worker thread ---------------------------------------------------------------
    def work(self) -> Run:
        self.run = self._execute(
            sinks=[self._sink], ctx_hook=self._hook, stream_sinks=[self._partial], cancel=self._cancel
        )
        return self.run

    def _execute(self, **hooks: Any) -> Run:
        return execute(
            self.spec.name,
            self.question,
            self.params,
            llm=self.llm,
            retriever=self.retriever,
            store=self.store,
            **hooks,
        )

    def _ended_as(self) -> Status:
        return ENDED_AS.get(self.run.status, "failed") if self.run else "failed"

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

    def _failed(self, exc: Exception) -> None:
        """execute() keeps a method's failures in the trace itself; this covers one around it (a store error)."""
        run = (
            self._ctx.run
            if self._ctx
            else Run(method=self.spec.name, question=self.question.text, options=self.question.options)
        )
        event = Event(
            run_id=run.id,
            seq=len(run.events),
            stage=Runner.FAILED,
            agent=self.spec.label,
            payload=Error(message=self.error or "", error_type=type(exc).__name__),
        )
        run.events.append(event)
        run.status, run.finished = "error", time.time()
        self.run = run
        self._sink(event)
