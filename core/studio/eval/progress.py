"""Where a running evaluation stands, per arm: questions done, errors, elapsed time and an estimate of the time
left. Written by the evaluation's threads, read by the page (and anything else) at any moment."""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass, replace

from core.engine.llm.embedded import MODEL_NAME
from core.engine.llm.speed import measured
from core.engine.store import RunStore
from core.studio.eval.results import ItemResult


@dataclass(frozen=True)
class ArmProgress:
    arm: str
    label: str
    total: int  # questions planned
    before: int  # finished by earlier evaluations of the same configuration
    done: int = 0  # finished by this one
    errors: int = 0  # of those, ended in error
    correct: int = 0
    run_seconds: float = 0.0  # the finished runs' own seconds, summed
    recorded: float | None = None  # seconds a question took this method before (the store's runs on this model)

    @property
    def finished(self) -> int:
        return self.before + self.done

    @property
    def left(self) -> int:
        return self.total - self.finished


class EvalProgress:
    """Thread-safe. Arms run interleaved (every arm on a question before the next question), so they share the
    elapsed time; the time left is each arm's remaining work at its own pace per question, turned into wall time
    at the parallelism measured so far."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arms: dict[str, ArmProgress] = {}
        self.started = time.time()
        self.ended: float | None = None

    def plan(self, arm: str, label: str, total: int, before: int, recorded: float | None = None) -> None:
        with self._lock:
            self._arms[arm] = ArmProgress(arm, label, total, before, recorded=recorded)

    def record(self, arm: str, row: ItemResult) -> None:
        with self._lock:
            a = self._arms[arm]
            self._arms[arm] = replace(
                a,
                done=a.done + 1,
                errors=a.errors + (row.status != "ok"),
                correct=a.correct + bool(row.correct),
                run_seconds=a.run_seconds + float(row.seconds or 0.0),
            )

    def end(self) -> None:
        self.ended = time.time()

    @property
    def elapsed(self) -> float:
        return (self.ended or time.time()) - self.started

    def arms(self) -> list[ArmProgress]:
        with self._lock:
            return list(self._arms.values())

    @property
    def from_record(self) -> bool:
        """Whether ``seconds_left`` is still the recorded pace, no run of this evaluation having finished."""
        return not any(a.done for a in self.arms())

    def seconds_left(self, arm: ArmProgress | None = None) -> float | None:
        """Wall seconds until ``arm`` (or the whole evaluation) is done. Before any run has finished: the seconds a
        question took each method before, one after another (None when an arm has no record)."""
        arms = self.arms()
        done_work = sum(a.run_seconds for a in arms)
        if not done_work:
            wanted = [a for a in ([arm] if arm is not None else arms) if a.left]
            if any(a.recorded is None for a in wanted):
                return None
            return sum(a.left * a.recorded for a in wanted)
        overall = done_work / sum(a.done for a in arms)

        def work_left(a: ArmProgress) -> float:
            return a.left * (a.run_seconds / a.done if a.done else overall)

        work = work_left(arm) if arm is not None else sum(work_left(a) for a in arms)
        return work * self.elapsed / done_work


RECORDED_RUNS = 50  # the latest runs of a method that make its recorded pace


def recorded_seconds(store: RunStore, method: str, model: str) -> float | None:
    """The median seconds of the method's latest finished runs on this model, as the store has them; for the
    embedded model with none stored yet, its measured seconds (``core.engine.llm.speed``, the shipped server)."""
    rows = [
        r
        for r in store.list_runs(limit=RECORDED_RUNS * 4, method=method)
        if r["status"] == "ok" and r["model"] == model and r["totals"].get("seconds")
    ][:RECORDED_RUNS]
    if rows:
        return statistics.median(r["totals"]["seconds"] for r in rows)
    if model != MODEL_NAME or (figures := measured()) is None or (speed := figures.methods.get(method)) is None:
        return None
    return speed.median_seconds
