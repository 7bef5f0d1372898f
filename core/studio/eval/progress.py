"""Where a running evaluation stands, per arm: questions done, errors, elapsed time and an estimate of the time
left. Written by the evaluation's threads, read by the page (and anything else) at any moment."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace

from core.studio.eval.results import ItemResult

PRIOR_QUESTIONS = 2  # the recorded pace counts as this many questions beside the ones this evaluation has run


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
    recorded: float | None = None  # seconds a question of this method is expected to take (``core.engine.estimate``)

    @property
    def finished(self) -> int:
        return self.before + self.done

    @property
    def left(self) -> int:
        return self.total - self.finished


class EvalProgress:
    """Thread-safe. Arms run interleaved (every arm on a question before the next question), so they share the
    elapsed time; the time left is each arm's remaining work at its own pace per question, turned into wall time
    at the parallelism measured so far. An arm's pace starts as its expected seconds and moves to its measured
    one as questions finish, the expected counting as ``PRIOR_QUESTIONS`` of them, so one slow first question (a
    cold prompt cache, an index opened) does not swing the estimate."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arms: dict[str, ArmProgress] = {}
        self.started = time.time()
        self.ended: float | None = None
        self._first_began: float | None = None  # when the first finished run began: the wall time runs have had

    def plan(self, arm: str, label: str, total: int, before: int, recorded: float | None = None) -> None:
        with self._lock:
            self._arms[arm] = ArmProgress(arm, label, total, before, recorded=recorded)

    def record(self, arm: str, row: ItemResult) -> None:
        with self._lock:
            began = time.time() - float(row.seconds or 0.0)
            self._first_began = began if self._first_began is None else min(self._first_began, began)
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
        """Wall seconds until ``arm`` (or the whole evaluation) is done. Before any run has finished: the seconds
        a question is expected to take each method, one after another, less the time gone since it began (None when
        an arm has no estimate)."""
        arms = self.arms()
        done_work = sum(a.run_seconds for a in arms)
        if not done_work:
            wanted = [a for a in ([arm] if arm is not None else arms) if a.left]
            if any(a.recorded is None for a in wanted):
                return None
            return max(sum(a.left * a.recorded for a in wanted) - self.elapsed, 0.0)
        overall = done_work / sum(a.done for a in arms)

        def pace(a: ArmProgress) -> float:
            if a.recorded is None:
                return a.run_seconds / a.done if a.done else overall
            return (PRIOR_QUESTIONS * a.recorded + a.run_seconds) / (PRIOR_QUESTIONS + a.done)

        work = sum(a.left * pace(a) for a in ([arm] if arm is not None else arms))
        ran_for = (self.ended or time.time()) - (self._first_began or self.started)
        return work * min(ran_for / done_work, 1.0)
