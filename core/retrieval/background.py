"""Building an index while the app already answers: the work runs in a thread, its progress is readable at any
time, and callers that need the corpus ask whether it is ready instead of waiting blind."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from core.retrieval.progress import Progress, is_load_stage, stage_line

State = Literal["building", "ready", "failed"]


@dataclass(frozen=True)
class BuildStatus:
    state: State
    stage: str  # e.g. "embed hpo"
    done: int
    total: int
    elapsed: float  # seconds since the build started (until it ended, once it has)
    error: str | None = None

    @property
    def fraction(self) -> float:
        """Of the current stage (stages differ in length, so an overall figure would mislead)."""
        return min(self.done / self.total, 1.0) if self.total else 0.0

    @property
    def only_opening(self) -> bool:
        """Still at work, but so far only opening what was built before (or not yet known to need a build)."""
        return self.state == "building" and (not self.stage or is_load_stage(self.stage))

    def describe(self) -> str:
        if self.state == "ready":
            return f"ready (took {self.elapsed:.0f} s)"
        if self.state == "failed":
            return f"failed after {self.elapsed:.0f} s: {self.error}"
        if not self.stage:
            return f"starting ({self.elapsed:.0f} s)"
        return f"{stage_line(self.stage, self.done, self.total)}, {self.elapsed:.0f} s so far"


class BackgroundBuild:
    """Runs ``work(progress)`` once in a daemon thread; ``status()`` says how far it got, ``result`` is what it
    returned. The work must be safe to run beside other threads (index builds hold a file lock per corpus)."""

    def __init__(self, work: Callable[[Progress], Any], name: str = "index build"):
        self._work = work
        self._lock = threading.Lock()
        self._stage, self._done, self._total = "", 0, 0
        self._started = time.time()
        self._ended: float | None = None
        self._error: str | None = None
        self.result: Any = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> BackgroundBuild:
        self._started = time.time()
        self._thread.start()
        return self

    def _progress(self, stage: str, done: int, total: int) -> None:
        with self._lock:
            self._stage, self._done, self._total = stage, done, total

    def _run(self) -> None:
        try:
            self.result = self._work(self._progress)
        except Exception as exc:  # the thread's boundary: the failure is shown, never raised into a page
            with self._lock:
                self._error = str(exc) or type(exc).__name__
        with self._lock:
            self._ended = time.time()

    def status(self) -> BuildStatus:
        with self._lock:
            state: State = "building" if self._ended is None else ("failed" if self._error else "ready")
            elapsed = (self._ended or time.time()) - self._started
            return BuildStatus(state, self._stage, self._done, self._total, round(elapsed, 1), self._error)

    def wait(self, timeout: float | None = None) -> BuildStatus:
        self._thread.join(timeout)
        return self.status()
