"""Starting the embedded model as a job (``core/engine/jobs.py``), one per server: its file assembled and checked the first
time (progress in MiB), then loaded into llama.cpp's server. Pages follow it, a reload finds it again, History lists
it. It cannot be stopped midway: the load is one call into llama.cpp that returns once the model is in memory."""

from __future__ import annotations

import threading

from core.engine.jobs import Job, JobProgress
from core.engine.llm.embedded import MODEL_NAME, EmbeddedServer

JOB_ID = "embedded model start"  # its id in the server's job runner: one start per server


class ModelStart(Job):
    """``EmbeddedServer.get()`` in a thread; ``result`` is the running server."""

    kind = "model start"
    cancellable = False  # llama.cpp loads the model in one call that cannot be interrupted
    alone = True

    def __init__(self, *, owner: str = ""):
        super().__init__(f"Embedded model ({MODEL_NAME})", owner=owner, job_id=JOB_ID)
        self._lock = threading.Lock()
        self._done = self._total = 0

    def work(self) -> EmbeddedServer:
        return EmbeddedServer.get(progress=self._file_progress)

    def _file_progress(self, done: int, total: int) -> None:
        with self._lock:
            self._done, self._total = done, total

    def _describe(self, exc: Exception) -> str:
        return str(exc) or type(exc).__name__

    def summary(self) -> JobProgress:
        if self.done:
            return JobProgress(f"could not start: {self.error}" if self.error else "ready", 1.0)
        with self._lock:
            done, total = self._done, self._total
        if total and done < total:
            return JobProgress(
                f"assembling and checking the model file: {done >> 20:,} of {total >> 20:,} MiB", done / total
            )
        return JobProgress("loading the model into memory")
