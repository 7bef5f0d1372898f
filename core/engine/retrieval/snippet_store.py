"""Snippet texts of one indexed corpus in SQLite, looked up by row (the position in the BM25 and FAISS
indexes) or by snippet id, so a 300k-snippet corpus need not sit in memory."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

from core.engine.retrieval.corpus import Snippet


class SnippetStore:
    FILE = "snippets.sqlite"

    def __init__(self, folder: Path):
        uri = f"file:{folder / self.FILE}?mode=ro&immutable=1"
        self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
        self._lock = threading.Lock()

    @classmethod
    def write(cls, folder: Path, snippets: Iterable[Snippet]) -> None:
        with sqlite3.connect(folder / cls.FILE) as db:
            db.execute(
                "CREATE TABLE snippets (row INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, title TEXT, text TEXT)"
            )
            db.executemany(
                "INSERT INTO snippets VALUES (?, ?, ?, ?)",
                ((row, s.id, s.title, s.text) for row, s in enumerate(snippets)),
            )
        db.close()

    def get(self, rows: list[int]) -> dict[int, Snippet]:
        if not rows:
            return {}
        marks = ",".join("?" * len(rows))
        with self._lock:
            found = self._db.execute(
                f"SELECT row, id, title, text FROM snippets WHERE row IN ({marks})", [int(r) for r in rows]
            ).fetchall()
        return {row: Snippet(sid, title, text) for row, sid, title, text in found}

    def rows_of(self, ids: Iterable[str]) -> list[int]:
        ids = list(ids)
        rows: list[int] = []
        for start in range(0, len(ids), 500):  # SQLite caps the number of bound parameters
            chunk = ids[start : start + 500]
            with self._lock:
                rows += [
                    r
                    for (r,) in self._db.execute(
                        f"SELECT row FROM snippets WHERE id IN ({','.join('?' * len(chunk))})", chunk
                    )
                ]
        return rows

    def close(self) -> None:
        self._db.close()
