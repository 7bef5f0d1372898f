"""An evaluation in a background thread, for a long-lived process (the studio's server): followed while it runs,
stopped on request. It is ``evaluate`` with the same store, so a later job (or ``python -m core eval``) with the
same plan resumes it, and it resumes what those left."""

from __future__ import annotations

import threading
import time
import uuid

from core.eval.plan import EvalPlan
from core.eval.progress import EvalProgress
from core.eval.runner import EvalOutcome, evaluate
from core.llm import LLM
from core.methods.base import Retriever
from core.store import RunStore


class EvalJob:
    def __init__(self, plan: EvalPlan, *, llm: LLM, retriever: Retriever | None, store: RunStore,
                 concurrency: int = 1, title: str = ""):
        self.id = uuid.uuid4().hex[:10]
        self.plan = plan
        self.title = title
        self.backend = llm.backend
        self.concurrency = concurrency
        self.progress = EvalProgress()
        self.outcome: EvalOutcome | None = None
        self.error: str | None = None
        self.created = time.time()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, args=(llm, retriever, store), daemon=True,
                                        name=f"studio-eval-{self.id}")

    def start(self) -> EvalJob:
        self._thread.start()
        return self

    def stop(self) -> None:
        """The runs in flight are cancelled (and kept, as cancelled); finished questions stay finished."""
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    @property
    def status(self) -> str:
        if self.running:
            return "stopping" if self._stop.is_set() else "running"
        if self.error:
            return "failed"
        return "stopped" if self.outcome is None or self.outcome.cancelled else "finished"

    def _work(self, llm: LLM, retriever: Retriever | None, store: RunStore) -> None:
        try:
            self.outcome = evaluate(self.plan, llm=llm, retriever=retriever, store=store,
                                    concurrency=self.concurrency, stop=self._stop, watch=self.progress)
        except Exception as exc:  # noqa: BLE001 - the page must hear of it, whatever it is
            self.error = f"{type(exc).__name__}: {exc}"
            self.progress.end()
