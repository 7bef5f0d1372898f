"""An evaluation as a job (``core/engine/jobs.py``), for a long-lived process (the studio's server): followed while it
runs, stopped on request. It is ``evaluate`` with the same store, so a later job (or ``python -m core eval``) with
the same plan resumes it, and it resumes what those left."""

from __future__ import annotations

from core.engine.jobs import Job, JobProgress, Status
from core.engine.llm import LLM
from core.engine.retrieval.retriever import Retriever
from core.engine.store import RunStore
from core.studio.eval.plan import EvalPlan
from core.studio.eval.progress import EvalProgress
from core.studio.eval.runner import EvalOutcome, evaluate


class EvalJob(Job):
    kind = "benchmark"
    alone = True  # two would only share the same model and cores

    def __init__(
        self,
        plan: EvalPlan,
        *,
        llm: LLM,
        retriever: Retriever | None,
        store: RunStore,
        concurrency: int = 1,
        title: str = "",
        owner: str = "",
    ):
        super().__init__(title, owner=owner)
        self.plan = plan
        self.llm, self.retriever, self.store = llm, retriever, store
        self.backend = llm.backend
        self.concurrency = concurrency
        self.progress = EvalProgress()

    @property
    def title(self) -> str:
        return self.label

    @property
    def outcome(self) -> EvalOutcome | None:
        return self.result

    def summary(self) -> JobProgress:
        arms = self.progress.arms()
        finished, total = sum(a.finished for a in arms), sum(a.total for a in arms)
        return JobProgress(f"{finished} of {total} runs on {self.backend}", finished / total if total else None)

    def work(self) -> EvalOutcome:
        """The runs in flight when it is cancelled are kept, as cancelled; finished questions stay finished."""
        return evaluate(
            self.plan,
            llm=self.llm,
            retriever=self.retriever,
            store=self.store,
            concurrency=self.concurrency,
            stop=self._cancel,
            watch=self.progress,
        )

    def _ended_as(self) -> Status:
        if self.error is not None:
            return "failed"
        return "stopped" if self.outcome is None or self.outcome.cancelled else "finished"

    def _failed(self, exc: Exception) -> None:
        self.progress.end()
