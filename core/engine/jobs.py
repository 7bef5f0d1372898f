"""Background work in a long-lived process (the studio's server), built once: a job runs in its own thread, says
how far it got, can be asked to stop, and ends with a result or a failure; the runner holds every job the process
started, by id, so any page, tab or reload finds one again, and lists what is running.

A kind of work is a ``Job`` subclass with a ``work()``: live runs (``core/engine/live_run.py``), what-if re-runs
(``core/studio/workshop/whatif.py``), benchmark runs (``core/studio/eval/job.py``) and index builds
(``core/engine/retrieval/background.py``). The thread never touches a screen; screens read the job.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar

Status = Literal["running", "stopping", "finished", "stopped", "failed"]
KEEP_ENDED_SECONDS = 3600.0  # ended jobs stay findable this long (a page shows their result), then they are dropped

J = TypeVar("J", bound="Job")


@dataclass(frozen=True)
class JobProgress:
    """Where a job is, in one line; ``fraction`` when the work knows its size."""

    text: str
    fraction: float | None = None


class Job:
    """One piece of work in a daemon thread. Subclasses say what they are (``kind``) and do it in ``work()``,
    which returns the result and should end soon after ``stop_requested`` (``_cancel`` is set)."""

    kind: ClassVar[str] = "job"
    cancellable: ClassVar[bool] = True
    alone: ClassVar[bool] = False  # one of its kind at a time: two would only share the same model and cores
    lasting: ClassVar[bool] = False  # kept for the process's life: pages read its result long after it ended

    def __init__(self, label: str, *, detail: str = "", owner: str = "", job_id: str | None = None):
        self._id = job_id or uuid.uuid4().hex[:10]
        self.label = label  # what it is, e.g. "MedRAG" or "mini: 5 questions × cot"
        self.detail = detail  # what it works on, e.g. the question
        self.owner = owner  # who started it (the client, as the access policy counts clients)
        self.started = time.time()
        self.ended: float | None = None
        self.result: Any = None
        self.error: str | None = None
        self._cancel = threading.Event()
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    @property
    def id(self) -> str:
        return self._id

    def work(self) -> Any:
        raise NotImplementedError

    def summary(self) -> JobProgress:
        """Where the work is now, for a list of jobs."""
        return JobProgress(self.status)

    def start(self: J) -> J:
        self.started = time.time()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"studio-{self.kind}-{self._id}")
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Asks the work to stop; what it finished stays finished. A job that cannot stop midway ignores it."""
        if self.cancellable:
            self._cancel.set()

    @property
    def stop_requested(self) -> bool:
        return self._cancel.is_set()

    @property
    def done(self) -> bool:
        return self.ended is not None

    @property
    def running(self) -> bool:
        return self._thread is not None and not self.done

    @property
    def elapsed(self) -> float:
        return (self.ended or time.time()) - self.started

    @property
    def status(self) -> Status:
        if not self.done:
            return "stopping" if self.stop_requested else "running"
        return self._ended_as()

    def until_done(self, timeout: float | None = None) -> bool:
        """Waits up to ``timeout`` seconds for the job to end; whether it has."""
        with self._changed:
            return self._changed.wait_for(lambda: self.done, timeout=timeout)

    # -- hooks for subclasses -------------------------------------------------------------------------------------
    def _ended_as(self) -> Status:
        if self.error is not None:
            return "failed"
        return "stopped" if self.stop_requested else "finished"

    def _describe(self, exc: Exception) -> str:
        return f"{type(exc).__name__}: {exc}"

    def _failed(self, exc: Exception) -> None:
        """Called in the job's thread when ``work()`` raised, after ``error`` is set."""

    # -- the thread -----------------------------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            self.result = self.work()
        except Exception as exc:  # noqa: BLE001 - the thread's boundary: the failure is shown, never raised into a page
            self.error = self._describe(exc)
            self._failed(exc)
        finally:
            with self._changed:
                self.ended = time.time()
                self._changed.notify_all()


class Busy(RuntimeError):
    """A job that runs alone found another of its kind running."""

    def __init__(self, running: Job):
        super().__init__(f"a {running.kind} is already running ({running.label})")
        self.running = running


class JobRunner:
    """Every job this process started, by id: start, find, list, and admit under a per-owner limit."""

    def __init__(self, keep_ended: float = KEEP_ENDED_SECONDS):
        self.keep_ended = keep_ended
        self._lock = threading.Lock()  # the registry itself: held only to read or change the dict
        self._starting = threading.Lock()  # counting then starting, so two clicks at once cannot both pass a limit
        self._jobs: dict[str, Job] = {}

    def start(self, job: J) -> J:
        """Starts ``job`` and keeps it; raises ``Busy`` when it runs alone and another of its kind is running."""
        with self._starting:
            if job.alone and (going := self.running(type(job))):
                raise Busy(going[0])
            self._keep(job.start())
        return job

    def admit(self, jobs: list[J], *, counting: type[Job], refusal: Callable[[int], str | None]) -> str | None:
        """Starts ``jobs`` (all of one owner) unless ``refusal(n)`` gives a reason, ``n`` being the jobs of type
        ``counting`` their owner has going; returns that reason, or None once they are started."""
        owner = jobs[0].owner if jobs else ""
        with self._starting:
            going = sum(1 for j in self.running(counting) if j.owner == owner)
            if problem := refusal(going):
                return problem
            for job in jobs:
                self._keep(job.start())
        return None

    def once(self, job_id: str, make: Callable[[], J]) -> J:
        """The job with this id, started by ``make()`` (which gives it that id) when there is none yet."""
        with self._starting:
            job = self.get(job_id)
            if job is None:
                job = self._keep(make().start())
        return job

    def get(self, job_id: str | None, of: type[J] = Job) -> J | None:
        """The job with this id when it is one of type ``of``."""
        with self._lock:
            job = self._jobs.get(job_id or "")
        return job if isinstance(job, of) else None

    def jobs(self, of: type[J] = Job) -> list[J]:
        """Every job kept, of type ``of``, newest first."""
        with self._lock:
            found = [j for j in self._jobs.values() if isinstance(j, of)]
        return sorted(found, key=lambda j: j.started, reverse=True)

    def running(self, of: type[J] = Job) -> list[J]:
        return [j for j in self.jobs(of) if not j.done]

    def latest(self, of: type[J] = Job) -> J | None:
        found = self.jobs(of)
        return found[0] if found else None

    def _keep(self, job: J) -> J:
        with self._lock:
            now = time.time()
            self._jobs = {
                i: j
                for i, j in self._jobs.items()
                if j.lasting or not j.done or (j.ended or now) > now - self.keep_ended
            }
            if job.id:
                self._jobs[job.id] = job
        return job
