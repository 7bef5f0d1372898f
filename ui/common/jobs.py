"""The server's job runner (``core/engine/jobs.py``), one per process (``st.cache_resource``): live runs, what-if re-runs,
benchmarks and index builds started from any page are held there by id, so a rerun, another page, a reload or a
second tab finds the same job again; the embedded model's start is one too. And the session's side of it: who may
stop a job, and the Stop button."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from core.engine.jobs import Busy, Job, JobRunner
from core.engine.live_run import LiveRun
from core.engine.llm.model_start import JOB_ID, ModelStart
from core.studio.access import Action
from ui.common import access

J = TypeVar("J", bound=Job)

STOP_WAIT_SECONDS = 2.0


@st.cache_resource(show_spinner=False)
def runner() -> JobRunner:
    return JobRunner()


def live(run_id: str | None) -> LiveRun | None:
    """The live run (or what-if re-run) with this run id, while this server holds it."""
    return runner().get(run_id, LiveRun)


def again_if_failed(job_id: str, of: type[J], make: Callable[[], J]) -> J:
    """The job with this id, going or ended well; started by ``make()`` (which gives it that id) when there is none,
    or again when the last one failed (a click to try again)."""
    job = runner().get(job_id, of)
    if job is None:
        return runner().once(job_id, make)
    if not (job.done and job.error):
        return job
    try:
        return runner().start(make())
    except Busy as exc:  # another tab tried again first
        return exc.running


def model_start() -> ModelStart:
    """The embedded model's start, one per server: the job going or done, or a new one."""
    return again_if_failed(JOB_ID, ModelStart, lambda: ModelStart(owner=access.client_key()))


def model_starting() -> ModelStart | None:
    """The embedded model's start while it is going (it is never started just to look)."""
    job = runner().get(JOB_ID, ModelStart)
    return job if job is not None and not job.done else None


def may_stop(job: Job) -> bool:
    """The owner stops any job; anyone else the jobs their client started (every tab of one computer, as the
    visitor's limit on live runs counts them, so a reload keeps control of one's own run)."""
    return job.cancellable and (
        access.current().may(Action.MANAGE_RUNS) or job.owner == access.client_key() or access.mine(job.id)
    )


def _stop(jobs: list[Job]) -> None:
    """Cancel, then give the jobs a moment to end (most do within a second), so the page that follows draws them
    ended: Run available again, no Stop. A job still ending is picked up by its live panel as before."""
    refused = [job for job in jobs if not may_stop(job)]  # asked again where the stop happens
    for job in refused:
        st.error(f"Only the studio's owner can stop {job.label}: it is not one you started.", icon=":material/lock:")
    jobs = [job for job in jobs if job not in refused]
    for job in jobs:
        job.cancel()
    deadline = time.monotonic() + STOP_WAIT_SECONDS
    for job in jobs:
        job.until_done(max(deadline - time.monotonic(), 0.0))


def stop_button(jobs: list[Job], *, key: str, label: str = "Stop") -> None:
    """Stop for jobs that are going; disabled, saying so, once a stop is on its way."""
    going = [job for job in jobs if not job.done and may_stop(job)]
    if not going:  # nothing going, or not this visitor's to stop (only the owner stops others' jobs)
        return
    stopping = all(job.stop_requested for job in going)
    st.button(
        "Stopping…" if stopping else label,
        icon=":material/stop:",
        key=key,
        width="stretch",
        disabled=stopping,
        on_click=_stop,
        args=(going,),
        help=None if stopping else "Stops at the next step; what was done so far is kept",
    )
