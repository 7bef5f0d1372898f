"""Runs and their events in one SQLite file. Events are appended as they happen."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlite_utils

from core.engine import paths
from core.engine.stages import Runner
from core.engine.store import owner
from core.engine.store.sqlite import database, transaction
from core.engine.trace import Answer, Error, Event, Run, Totals

# A run saved before owners were recorded, with no event for this long, is not running any more: one LLM call
# gives up long before (timeout × tries).
OWNERLESS_STALE_SECONDS = 3600.0
INTERRUPTED = (
    "the process running this run ended before the run did (it was killed, or the machine stopped); "
    "the trace is kept up to that point"
)


def mark_interrupted(run: Run, why: str, at: float) -> Event:
    """Ends a run that stopped without finishing at ``at``: an error event saying ``why``, status interrupted."""
    event = Event(
        run_id=run.id,
        seq=len(run.events),
        stage=Runner.INTERRUPTED,
        agent="Studio",
        time=at,
        payload=Error(message=why, error_type="interrupted"),
    )
    run.events.append(event)
    run.status, run.finished = "interrupted", at
    run.totals = run.compute_totals()
    return event


class RunStore:
    """Thread-safe: methods emit events from worker threads. Several processes may open the same file. The stores
    that keep their tables beside the runs (groups, prices, provenance, run files) go through ``reading`` and
    ``writing`` too, so they share its one connection and lock."""

    def __init__(self, path: Path | str | None = None):
        self.path = Path(path or paths.db_path())
        self.db = database(self.path)
        self._lock = threading.RLock()
        self.close_orphans()

    @contextmanager
    def reading(self) -> Iterator[sqlite_utils.Database]:
        with self._lock:
            yield self.db

    @contextmanager
    def writing(self) -> Iterator[sqlite_utils.Database]:
        """One write transaction (see ``core.engine.store.sqlite.transaction``)."""
        with self._lock, transaction(self.db.conn):
            yield self.db

    # -- writing ---------------------------------------------------------------------
    def create_run(self, run: Run) -> None:
        with self.writing() as db:
            db["runs"].insert({**self._run_row(run), **owner.current()})

    def append_event(self, event: Event) -> None:
        with self.writing() as db:
            db["events"].insert(self._event_row(event))

    def finish_run(self, run: Run) -> None:
        with self.writing() as db:
            db["runs"].update(run.id, self._run_row(run))

    def close_orphans(self) -> list[str]:
        """Marks ``interrupted`` every run left ``running`` by a process that is gone, with an error event saying
        so; returns their ids. Runs that live processes are writing are left alone."""
        with self.reading() as db:
            rows = list(
                db.query(
                    "SELECT r.id, r.started, r.owner_host, r.owner_pid, r.owner_started, max(e.time) AS last "
                    "FROM runs r LEFT JOIN events e ON e.run_id = r.id WHERE r.status = 'running' GROUP BY r.id"
                )
            )
        now, closed = time.time(), []
        for row in rows:
            last = row["last"] or row["started"]
            ownerless = row["owner_pid"] is None and now - last > OWNERLESS_STALE_SECONDS
            if (
                ownerless or owner.is_gone(row["owner_host"], row["owner_pid"], row["owner_started"])
            ) and self._interrupt(row["id"], last):
                closed.append(row["id"])
        return closed

    def _interrupt(self, run_id: str, last: float) -> bool:
        with self.writing() as db:  # another process may be closing the same run: read it inside the write
            run = self.load_run(run_id)
            if run.status != "running":
                return False
            event = mark_interrupted(run, INTERRUPTED, last)
            db["events"].insert(self._event_row(event))
            db["runs"].update(run_id, self._run_row(run))
        return True

    # -- reading ---------------------------------------------------------------------
    def load_run(self, run_id: str) -> Run:
        with self.reading() as db:
            row = db["runs"].get(run_id)
            events = list(db["events"].rows_where("run_id = ?", [run_id], order_by="seq"))
        return Run(
            id=row["id"],
            method=row["method"],
            params=json.loads(row["params"]),
            question=row["question"],
            options=json.loads(row["options"]),
            model=row["model"],
            corpus=json.loads(row["corpus"]),
            started=row["started"],
            finished=row["finished"],
            status=row["status"],
            answer=Answer.model_validate_json(row["answer"]) if row["answer"] else None,
            totals=Totals.model_validate_json(row["totals"]),
            parent_id=row["parent_id"],
            events=[
                Event.model_validate({**e, "payload": json.loads(e["payload"]), "usage": json.loads(e["usage"])})
                for e in events
            ],
        )

    def find_run(self, run_id: str) -> Run | None:
        """The saved run, or None when no run has that id."""
        try:
            return self.load_run(run_id)
        except sqlite_utils.db.NotFoundError:
            return None

    def list_runs(self, limit: int = 200, method: str | None = None) -> list[dict[str, Any]]:
        """Newest first. Runs whose process has gone since the store opened are marked interrupted first."""
        self.close_orphans()
        where, args = ("method = ?", [method]) if method else (None, [])
        with self.reading() as db:
            rows = list(db["runs"].rows_where(where, args, order_by="started desc", limit=limit))
        for row in rows:
            row["totals"] = json.loads(row["totals"])
            row["answer"] = json.loads(row["answer"]) if row["answer"] else None
            row["options"] = json.loads(row["options"])
        return rows

    def recorded_by(self, run: Run) -> Run | None:
        """For a run served from the response cache: the latest earlier run of the same method, knobs, question
        and model that made its calls, which is what recorded those replies (None when the cache holds them from
        elsewhere: another studio's database, a cleared one)."""
        with self.reading() as db:
            rows = list(
                db["runs"].rows_where(
                    "method = ? AND params = ? AND question = ? AND options = ? AND model = ? AND status = 'ok' "
                    "AND started < ? AND id != ?",
                    [
                        run.method,
                        json.dumps(run.params),
                        run.question,
                        json.dumps(run.options),
                        run.model,
                        run.started,
                        run.id,
                    ],
                    order_by="started desc",
                    select="id, totals",
                )
            )
        made = next((row["id"] for row in rows if not json.loads(row["totals"]).get("cached")), None)
        return self.load_run(made) if made else None

    def has_run(self, run_id: str) -> bool:
        with self.reading() as db:
            return db["runs"].count_where("id = ?", [run_id]) > 0

    def delete_run(self, run_id: str) -> None:
        with self.writing() as db:
            db["events"].delete_where("run_id = ?", [run_id])
            db["runs"].delete(run_id)

    @staticmethod
    def _event_row(event: Event) -> dict[str, Any]:
        return {
            "run_id": event.run_id,
            "seq": event.seq,
            "stage": event.stage,
            "agent": event.agent,
            "kind": event.kind,
            "payload": event.payload.model_dump_json(),
            "usage": event.usage.model_dump_json(),
            "time": event.time,
        }

    @staticmethod
    def _run_row(run: Run) -> dict[str, Any]:
        return {
            "id": run.id,
            "method": run.method,
            "params": json.dumps(run.params),
            "question": run.question,
            "options": json.dumps(run.options),
            "model": run.model,
            "corpus": json.dumps(run.corpus),
            "started": run.started,
            "finished": run.finished,
            "status": run.status,
            "answer": run.answer.model_dump_json() if run.answer else None,
            "totals": run.totals.model_dump_json(),
            "parent_id": run.parent_id,
        }
