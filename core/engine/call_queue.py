"""The model's queue as this process sees it: every LLM call a run has in flight, per backend, in the order they
were sent, so a screen can say what a run is doing when it has nothing new to show: waiting behind other runs
("waiting: 2 runs ahead on the embedded model"), or served and reading its prompt before the first word.

A backend serves a number of calls at once (the embedded server's slots) and queues the rest in the order they came;
an endpoint's number is unknown, so nothing is said to wait there. Only this process's calls are seen: a benchmark
started from the command line shares the cores, not this queue. ``RunContext.ask`` registers every call.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import count
from typing import Literal

State = Literal["waiting", "reading", "writing"]


@dataclass
class Call:
    run_id: str
    stage: str
    agent: str
    backend: str
    where: str  # the backend in words, e.g. "the embedded model"
    slots: int | None  # calls the backend serves at once; None: not known
    sent: float = field(default_factory=time.time)
    writing: bool = False  # its first words have come back
    order: int = 0


@dataclass(frozen=True)
class Standing:
    """One call of a run as it stands now."""

    stage: str
    agent: str
    state: State
    since: float  # when it was sent
    runs_ahead: int  # runs with a call ahead of it in the backend's queue (waiting only)
    calls_ahead: int
    others: int  # other runs with a call in flight on the same backend
    where: str

    def line(self) -> str:
        """e.g. 'waiting: 2 runs ahead on the embedded model', 'reading the prompt (1 other run on the model)'."""
        if self.state == "waiting":
            runs = f"{self.runs_ahead} run{'s' if self.runs_ahead != 1 else ''}"
            return f"waiting: {runs} ahead on {self.where}"
        shared = (
            f" ({self.others} other run{'s' if self.others != 1 else ''} on {self.where} too)" if self.others else ""
        )
        return ("reading the prompt" if self.state == "reading" else "writing") + shared


class CallQueue:
    """Thread-safe; one per process (``QUEUE``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[int, Call] = {}
        self._order = count()

    @contextmanager
    def call(
        self, run_id: str, stage: str, agent: str, *, backend: str, where: str, slots: int | None
    ) -> Iterator[Call]:
        """Registers a call for as long as it is in flight."""
        with self._lock:
            entry = Call(run_id, stage, agent, backend, where, slots, order=next(self._order))
            self._calls[entry.order] = entry
        try:
            yield entry
        finally:
            with self._lock:
                self._calls.pop(entry.order, None)

    def standing(self, run_id: str) -> list[Standing]:
        """The run's calls in flight, oldest first, each served (reading or writing) or waiting, and behind what."""
        with self._lock:
            calls = sorted(self._calls.values(), key=lambda c: c.order)
        found = []
        for mine in (c for c in calls if c.run_id == run_id):
            queue = [c for c in calls if c.backend == mine.backend]
            ahead = queue[: queue.index(mine)]
            served = mine.writing or mine.slots is None or len(ahead) < mine.slots
            others = len({c.run_id for c in queue} - {run_id})
            state: State = "writing" if mine.writing else "reading" if served else "waiting"
            found.append(
                Standing(
                    mine.stage,
                    mine.agent,
                    state,
                    mine.sent,
                    0 if served else len({c.run_id for c in ahead} - {run_id}),
                    0 if served else len(ahead),
                    others,
                    mine.where,
                )
            )
        return found


QUEUE = CallQueue()


def slots_of(llm) -> int | None:
    """Calls a backend serves at once: the embedded server's slots; None for an endpoint (its own affair)."""
    if llm.endpoint.embedded:
        from core.engine.llm.embedded import SHIPPED

        return SHIPPED.slots
    return None
