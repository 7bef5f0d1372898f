"""Benchmark jobs in the server's job runner (``ui/common/jobs.py``): started from the page, they run in a background
thread (the same engine and store as ``python -m core eval``), so the rest of the studio stays usable and a reload
finds them again. One runs at a time: two would only share the same model and cores."""

from __future__ import annotations

import time

import streamlit as st

from core.engine.jobs import Busy
from core.engine.llm import LLM, Endpoint
from core.engine.methods import get
from core.studio.access import Action
from core.studio.eval.job import EvalJob
from core.studio.eval.progress import EvalProgress
from ui.benchmark.setup import Setup
from ui.common import access, jobs, keys, state
from ui.common.text import duration as said_duration
from ui.runs.launch import embedded_server, ensure_model, open_retriever_for, start_model

REFRESH_SECONDS = 1.5
RESULTS_EVERY_SECONDS = 10.0


def current_job() -> EvalJob | None:
    """This session's job, else the one running (a reload or another tab re-attaches to it), else the last one."""
    runner = jobs.runner()
    going = runner.running(EvalJob)
    return runner.get(st.session_state.get(keys.BENCH_JOB), EvalJob) or (going[0] if going else runner.latest(EvalJob))


def backend_llm(choice: str) -> LLM | None:
    """The model the job asks (the embedded one started first when needed), or None after saying why not."""
    if choice == "embedded":
        if embedded_server() is None and not start_model():
            return None
        return LLM(Endpoint(timeout=state.endpoint().timeout))
    return state.llm() if ensure_model() else None


def start(setup: Setup) -> EvalJob | None:
    if not access.allowed(Action.BENCHMARK):
        return None
    plan = setup.plan
    searching = [get(arm.method) for arm in plan.arms if get(arm.method).uses_retrieval]
    retriever = None
    if searching:
        retriever, problem = open_retriever_for(searching[0])
        if problem:
            st.error(problem)
            return None
    llm = backend_llm(setup.backend)
    if llm is None:
        return None
    arms = ", ".join(arm.name for arm in plan.arms)
    job = EvalJob(
        plan,
        llm=llm,
        retriever=retriever,
        store=state.store(),
        concurrency=setup.concurrency,
        title=f"{setup.bench_name}: {len(plan.items)} questions × {arms}",
        owner=access.client_key(),
    )
    try:
        jobs.runner().start(job)
    except Busy as busy:
        st.error(
            f"A benchmark is already running ({busy.running.label}); stop it or wait for it to end. "
            "Two at once would only share the same model and cores."
        )
        return None
    st.session_state[keys.BENCH_JOB] = job.id
    return job


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown until a question is done (no run of this method recorded here yet)"
    return said_duration(seconds)


def _paced(progress: EvalProgress) -> str:
    """Where the estimate comes from while no question of this benchmark has finished."""
    return (
        " (at the pace expected for these methods on this computer; updated as questions finish)"
        if progress.from_record and progress.seconds_left() is not None
        else ""
    )


def _arm_lines(progress: EvalProgress, running: bool) -> None:
    for arm in progress.arms():
        done = f"{arm.finished} of {arm.total} questions" + (f" ({arm.before} from before)" if arm.before else "")
        parts = [f"**{arm.label}**: {done}", f"{arm.errors} error{'s' if arm.errors != 1 else ''}"]
        if arm.done:
            parts.append(f"{duration(arm.run_seconds)} of runs, {arm.run_seconds / arm.done:.0f} s per question")
        if running and arm.left:
            parts.append(f"about {duration(progress.seconds_left(arm))} left")
        st.progress(arm.finished / arm.total if arm.total else 1.0, text=" · ".join(parts))


def _panel(job_id: str) -> None:
    job = jobs.runner().get(job_id, EvalJob)
    if job is None:
        return
    p = job.progress
    if job.running:
        st.markdown(
            f":blue-badge[{job.status}] {job.title} · {job.concurrency} at once on {job.backend} · "
            f"elapsed {duration(p.elapsed)} · about {duration(p.seconds_left())} left{_paced(p)}"
        )
    else:
        badge = {"finished": "green", "stopped": "orange", "failed": "red"}[job.status]
        ran = job.outcome.ran if job.outcome else sum(a.done for a in p.arms())
        st.markdown(
            f":{badge}-badge[{job.status}] {job.title} · {ran} run(s) in {duration(p.elapsed)} on {job.backend}"
        )
    if job.error:
        st.error(
            f"The benchmark stopped on an unexpected problem: {job.error}. Finished questions are kept; "
            "start it again to resume."
        )
    _arm_lines(p, job.running)


@st.fragment(run_every=REFRESH_SECONDS)
def _live_panel(job_id: str) -> None:
    _panel(job_id)
    job = jobs.runner().get(job_id, EvalJob)
    if job is None:
        return
    done = sum(a.done for a in job.progress.arms())
    seen, when = st.session_state.get(keys.BENCH_SEEN, (0, 0.0))
    # the whole page again (its results then include what just finished) when the job ends, and now and then
    # while questions finish; the progress alone is redrawn in between
    if not job.running or (done != seen and time.time() - when > RESULTS_EVERY_SECONDS):
        st.session_state[keys.BENCH_SEEN] = (done, time.time())
        st.rerun()


def progress_panel(job: EvalJob) -> None:
    """Progress per arm: refreshed in place while the job runs, without rerunning the rest of the page."""
    (_live_panel if job.running else _panel)(job.id)
