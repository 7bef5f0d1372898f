"""Several real processes opening a new studio database and a new response cache at the same moment: every one
succeeds, migrations are applied once, no row is lost."""

from __future__ import annotations

import multiprocessing
import traceback

import pytest

from core.engine.llm.cache import ResponseCache
from core.engine.store import RunStore
from core.engine.store.migrations import MIGRATIONS
from core.engine.trace import Event, Query, Run, Usage

ROWS = 15


def _open_and_write(db_path: str, cache_path: str, worker: int, barrier, failures) -> None:
    try:
        barrier.wait()  # all open at once
        store, cache = RunStore(db_path), ResponseCache(cache_path)
        for i in range(ROWS):
            run = Run(method="cot", question=f"q {worker}-{i}")
            store.create_run(run)
            store.append_event(
                Event(run_id=run.id, seq=0, stage="s", agent="a", payload=Query(text="x"), usage=Usage(calls=1))
            )
            run.status = "ok"
            store.finish_run(run)
            cache.put(f"{worker}-{i}", "m", "text", 1, 1)
    except BaseException:
        failures.put(f"process {worker}: {traceback.format_exc()}")


@pytest.mark.parametrize("processes", [2, 8])
def test_processes_opening_a_new_database_and_cache_at_once(tmp_path, processes):
    context = multiprocessing.get_context("fork")
    barrier, failures = context.Barrier(processes), context.Queue()
    db_path, cache_path = str(tmp_path / "studio.sqlite"), str(tmp_path / "llm_cache.sqlite")
    workers = [
        context.Process(target=_open_and_write, args=(db_path, cache_path, n, barrier, failures))
        for n in range(processes)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    problems = []
    while not failures.empty():
        problems.append(failures.get())
    assert not problems, "\n".join(problems)
    assert [w.exitcode for w in workers] == [0] * processes
    store = RunStore(db_path)
    assert [r["version"] for r in store.db["_migrations"].rows] == [v for v, _, _ in MIGRATIONS]
    assert store.db["runs"].count == store.db["events"].count == processes * ROWS
    assert len(ResponseCache(cache_path)) == processes * ROWS
