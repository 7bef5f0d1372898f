"""Runs and their events in one SQLite file. Events are appended as they happen."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import sqlite_utils

from core import paths
from core.store.migrations import migrate
from core.trace import Answer, Event, Run, Totals


class RunStore:
    """Thread-safe: methods emit events from worker threads."""

    def __init__(self, path: Path | str | None = None):
        self.path = Path(path or paths.db_path())
        conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self.db = sqlite_utils.Database(conn)
        self.db.enable_wal()
        self.db.execute("PRAGMA foreign_keys=ON")
        self._lock = threading.RLock()
        with self._lock:
            migrate(self.db)

    # -- writing ---------------------------------------------------------------------
    def create_run(self, run: Run) -> None:
        with self._lock, self.db.conn:
            self.db["runs"].insert(self._run_row(run))

    def append_event(self, event: Event) -> None:
        row = {"run_id": event.run_id, "seq": event.seq, "stage": event.stage, "agent": event.agent, "kind": event.kind,
               "payload": event.payload.model_dump_json(), "usage": event.usage.model_dump_json(), "time": event.time}
        with self._lock, self.db.conn:
            self.db["events"].insert(row)

    def finish_run(self, run: Run) -> None:
        with self._lock, self.db.conn:
            self.db["runs"].update(run.id, self._run_row(run))

    # -- reading ---------------------------------------------------------------------
    def load_run(self, run_id: str) -> Run:
        with self._lock:
            row = self.db["runs"].get(run_id)
            events = list(self.db["events"].rows_where("run_id = ?", [run_id], order_by="seq"))
        return Run(
            id=row["id"], method=row["method"], params=json.loads(row["params"]), question=row["question"],
            options=json.loads(row["options"]), model=row["model"], corpus=json.loads(row["corpus"]),
            started=row["started"], finished=row["finished"], status=row["status"],
            answer=Answer.model_validate_json(row["answer"]) if row["answer"] else None,
            totals=Totals.model_validate_json(row["totals"]), parent_id=row["parent_id"],
            events=[Event.model_validate({**e, "payload": json.loads(e["payload"]), "usage": json.loads(e["usage"])})
                    for e in events],
        )

    def list_runs(self, limit: int = 200, method: str | None = None) -> list[dict[str, Any]]:
        where, args = ("method = ?", [method]) if method else (None, [])
        with self._lock:
            rows = list(self.db["runs"].rows_where(where, args, order_by="started desc", limit=limit))
        for row in rows:
            row["totals"] = json.loads(row["totals"])
            row["answer"] = json.loads(row["answer"]) if row["answer"] else None
            row["options"] = json.loads(row["options"])
        return rows

    def delete_run(self, run_id: str) -> None:
        with self._lock, self.db.conn:
            self.db["annotations"].delete_where("run_id = ?", [run_id])
            self.db["events"].delete_where("run_id = ?", [run_id])
            self.db["runs"].delete(run_id)

    @staticmethod
    def _run_row(run: Run) -> dict[str, Any]:
        return {
            "id": run.id, "method": run.method, "params": json.dumps(run.params), "question": run.question,
            "options": json.dumps(run.options), "model": run.model, "corpus": json.dumps(run.corpus),
            "started": run.started, "finished": run.finished, "status": run.status,
            "answer": run.answer.model_dump_json() if run.answer else None,
            "totals": run.totals.model_dump_json(), "parent_id": run.parent_id,
        }
