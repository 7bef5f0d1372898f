import sqlite3
import threading

from core.engine.store import RunStore
from core.engine.store.migrations import MIGRATIONS
from core.engine.store.sqlite import migrate
from core.engine.trace import Answer, Event, Query, Run, Usage


def test_migrations_apply_once_and_are_recorded(tmp_path):
    store = RunStore(tmp_path / "s.sqlite")
    tables = set(store.db.table_names())
    assert {"runs", "events", "responses", "_migrations"} <= tables and "annotations" not in tables
    assert [r["version"] for r in store.db["_migrations"].rows] == [v for v, _, _ in MIGRATIONS]
    assert migrate(store.db) == []  # nothing left to apply
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _event(run, seq):
    return Event(run_id=run.id, seq=seq, stage="s", agent="a", payload=Query(text=f"q{seq}"), usage=Usage(calls=1))


def test_events_are_on_disk_before_the_run_finishes(tmp_path):
    path = tmp_path / "s.sqlite"
    store = RunStore(path)
    run = Run(method="cot", question="q")
    store.create_run(run)
    for i in range(3):
        store.append_event(_event(run, i))
    # another connection (another process after a crash) sees the events of the unfinished run
    rows = sqlite3.connect(path).execute("SELECT seq FROM events WHERE run_id = ? ORDER BY seq", [run.id]).fetchall()
    assert rows == [(0,), (1,), (2,)]
    loaded = RunStore(path).load_run(run.id)
    assert loaded.status == "running" and [e.payload.text for e in loaded.events] == ["q0", "q1", "q2"]


def test_finished_run_round_trips_exactly(tmp_path):
    store = RunStore(tmp_path / "s.sqlite")
    run = Run(method="cot", question="q", options={"A": "a", "B": "b"}, params={"max_tokens": 9}, corpus=["hpo"])
    store.create_run(run)
    run.events = [_event(run, 0)]
    store.append_event(run.events[0])
    run.answer, run.status, run.finished = Answer(choice="A", text="a", cited=["x"]), "ok", run.started + 2
    run.totals = run.compute_totals()
    store.finish_run(run)
    assert store.load_run(run.id) == run
    listed = store.list_runs()
    assert listed[0]["id"] == run.id and listed[0]["answer"]["choice"] == "A"
    assert store.find_run(run.id) == run and store.has_run(run.id)
    store.delete_run(run.id)
    assert store.list_runs() == [] and store.find_run(run.id) is None and not store.has_run(run.id)


def test_concurrent_appends_from_threads(tmp_path):
    store = RunStore(tmp_path / "s.sqlite")
    run = Run(method="cot", question="q")
    store.create_run(run)
    threads = [threading.Thread(target=store.append_event, args=(_event(run, i),)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.load_run(run.id).events) == 20
