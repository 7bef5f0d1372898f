"""Building an index while the app already answers: the work runs as a job (``core/engine/jobs.py``), its progress is
readable at any time, and callers that need the corpus ask whether it is ready instead of waiting blind."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from core.engine.jobs import Job, JobProgress
from core.engine.retrieval.progress import Progress, is_load_stage, stage_line

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


class BackgroundBuild(Job):
    """Runs ``build(progress)`` once; ``status()`` says how far it got, ``result`` is what it returned. The build
    must be safe to run beside other threads (index builds hold a file lock per corpus)."""

    kind = "index build"
    cancellable = False  # a build stopped midway would leave the corpus unusable until the next start
    lasting = True  # every page asks whether the corpus is ready, for the server's life

    def __init__(self, build: Callable[[Progress], Any], name: str = "index build", *, job_id: str | None = None):
        super().__init__(name, job_id=job_id)
        self._build = build
        self._lock = threading.Lock()
        self._stage, self._done, self._total = "", 0, 0

    def work(self) -> Any:
        return self._build(self._progress)

    def _progress(self, stage: str, done: int, total: int) -> None:
        with self._lock:
            self._stage, self._done, self._total = stage, done, total

    def _describe(self, exc: Exception) -> str:
        return str(exc) or type(exc).__name__

    def status(self) -> BuildStatus:
        with self._lock:
            state: State = "building" if self.ended is None else ("failed" if self.error else "ready")
            return BuildStatus(state, self._stage, self._done, self._total, round(self.elapsed, 1), self.error)

    def summary(self) -> JobProgress:
        status = self.status()
        return JobProgress(status.describe(), status.fraction)
