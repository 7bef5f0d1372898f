"""The job runner every kind of background work goes through: a job's life (progress, result, failure, cancel), the
runner finding jobs by id and kind, one-at-a-time kinds, a per-owner limit counted under one lock, and what it keeps
after a job ends. A what-if re-run is a job like a live run: it can be stopped."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from core.engine.jobs import Busy, Job, JobProgress, JobRunner
from core.engine.live_run import LiveRun
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from core.studio.runfiles import Variation
from core.studio.workshop.whatif import WhatIfRun
from tests.fakes import ListRetriever, ScriptedLLM, make_hits
from tests.waiting import Gate, patience, wait_until

MC = Question(text="Which drug treats disease 1?", options={"A": "aspirin", "B": "metformin"})
REPLY = {"reasoning": "From the documents.", "answer": "B", "cited_ids": []}


class Steps(Job):
    """Counts to ``n`` (each step once ``release`` is set, when given), stopping early when asked; ``fail`` raises at
    the end."""

    kind = "steps"

    def __init__(self, n: int = 3, *, fail: bool = False, owner: str = "", release=None):
        super().__init__(f"count to {n}", owner=owner)
        self.n, self.fail, self.release, self.done_steps = n, fail, release, 0

    def work(self) -> int:
        for _ in range(self.n):
            if self.stop_requested:
                break
            if self.release is not None:
                self.release.wait(patience())
            self.done_steps += 1
        if self.fail:
            raise OSError("disk full")
        return self.done_steps

    def summary(self) -> JobProgress:
        return JobProgress(f"{self.done_steps} of {self.n}", self.done_steps / self.n)


class Alone(Steps):
    kind = "alone"
    alone = True


def test_a_job_ends_with_its_result_or_its_failure_in_words():
    runner = JobRunner()
    ok = runner.start(Steps(3))
    assert ok.until_done(patience()) and ok.result == 3 and ok.status == "finished" and ok.error is None
    assert ok.summary() == JobProgress("3 of 3", 1.0)
    failed = runner.start(Steps(1, fail=True))
    assert failed.until_done(patience()) and failed.status == "failed" and failed.error == "OSError: disk full"
    assert runner.get(ok.id) is ok and runner.get(failed.id, Steps) is failed and runner.get("nope") is None
    assert runner.get(ok.id, LiveRun) is None  # asked for another kind: not found
    assert runner.jobs() == [failed, ok] and runner.running() == []  # newest first


def test_cancel_stops_the_work_and_the_job_says_so():
    release = threading.Event()
    job = JobRunner().start(Steps(100, release=release))
    assert job.status == "running" and job.running
    job.cancel()
    assert job.status == "stopping"
    release.set()
    assert job.until_done(patience()) and job.status == "stopped" and job.result < 100


def test_a_kind_that_runs_alone_refuses_a_second_while_one_runs():
    runner, release = JobRunner(), threading.Event()
    first = runner.start(Alone(1, release=release))
    with pytest.raises(Busy) as refused:
        runner.start(Alone(1))
    assert refused.value.running is first
    runner.start(Steps(1)).until_done(patience())  # another kind is not held up
    release.set()
    first.until_done(patience())
    assert runner.start(Alone(1)).until_done(patience())  # once it has ended, the next one starts


def test_admit_counts_an_owners_jobs_going_and_two_starts_at_once_cannot_both_pass():
    runner, release = JobRunner(), threading.Event()

    def at_most_one(going: int) -> str | None:
        return f"{going} going" if going >= 1 else None

    results = []
    threads = [
        threading.Thread(
            target=lambda: results.append(
                runner.admit([Steps(1, release=release, owner="ana")], counting=Steps, refusal=at_most_one)
            )
        )
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(patience())
    assert sorted(results, key=str) == ["1 going"] * 3 + [None]
    assert runner.admit([Steps(1, owner="bo")], counting=Steps, refusal=at_most_one) is None  # another owner
    release.set()
    assert all(job.until_done(patience()) for job in runner.jobs())
    assert runner.admit([Steps(1, owner="ana")], counting=Steps, refusal=at_most_one) is None  # ended: not counted


def test_ended_jobs_are_dropped_after_a_while_unless_they_last(monkeypatch):
    class Lasting(Steps):
        lasting = True

    now = [1_000.0]  # the runner's clock, moved by the test
    monkeypatch.setattr("core.engine.jobs.time", SimpleNamespace(time=lambda: now[0]))
    runner = JobRunner(keep_ended=60)
    short, kept = runner.start(Steps(1)), runner.start(Lasting(1))
    assert short.until_done(patience()) and kept.until_done(patience())
    runner.start(Steps(1))  # within the minute: both are still found
    assert runner.get(short.id) is short and runner.get(kept.id) is kept
    now[0] += 61
    runner.start(Steps(1))  # the runner tidies up as jobs start
    assert runner.get(short.id) is None and runner.get(kept.id) is kept


def test_once_starts_a_job_only_the_first_time():
    runner, made = JobRunner(), []

    def make() -> Steps:
        made.append(Steps(1))
        made[-1]._id = "the-index"
        return made[-1]

    assert runner.once("the-index", make) is runner.once("the-index", make) and len(made) == 1


def test_a_live_run_is_a_job_whose_id_is_its_run_id(tmp_path):
    store = RunStore(tmp_path / "s.sqlite")
    runner = JobRunner()
    live = LiveRun(
        "cot",
        MC,
        {},
        llm=ScriptedLLM().enqueue({"reasoning": "r", "answer": "B"}),
        retriever=None,
        store=store,
        owner="ana",
    )
    assert runner.admit([live], counting=LiveRun, refusal=lambda going: None) is None
    assert live.until_done(patience()) and runner.get(live.run.id, LiveRun) is live and live.status == "finished"
    assert store.load_run(live.id).status == "ok" and live.kind == "live run" and live.detail == MC.text


def test_a_what_if_re_run_can_be_stopped_and_keeps_its_parent(tmp_path):
    store = RunStore(tmp_path / "s.sqlite")
    retriever = ListRetriever(make_hits(6))
    parent = execute("medrag", MC, {"k": 3}, llm=ScriptedLLM().enqueue(REPLY), retriever=retriever, store=store)
    gate = Gate()
    held = ListRetriever(make_hits(6), hold=lambda query: gate.wait())
    job = JobRunner().start(
        WhatIfRun(
            parent,
            Variation(drop=["teaching-1"]),
            llm=ScriptedLLM().enqueue(REPLY),
            retriever=held,
            store=store,
            case_id="demo",
        )
    )
    assert job.kind == "what-if run" and job.label == "MedRAG (dropped teaching-1)" and job.status == "running"
    wait_until(lambda: gate.held, "the re-run's retrieval")
    job.cancel()  # during the retrieval: the reader's call never starts
    gate.open()
    assert job.until_done(patience()) and job.status == "stopped"
    saved = store.load_run(job.id)
    assert saved.status == "cancelled" and saved.parent_id == parent.id
    assert [e.kind for e in saved.events] == ["retrieval", "error"]
