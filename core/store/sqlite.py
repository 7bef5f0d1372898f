"""Opening the studio's SQLite files safely when several processes (the app, command-line evaluations) open
the same file, possibly a new one, at the same moment."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils
from filelock import FileLock

from core.store.migrations import migrate

BUSY_SECONDS = 30.0  # how long a write waits for another process's transaction before "database is locked"
SETUP_SECONDS = 120.0  # how long opening waits for another process that is setting up the same file


def connect(path: Path | str) -> sqlite_utils.Database:
    """A connection shared by threads, waiting up to ``BUSY_SECONDS`` on another writer."""
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=BUSY_SECONDS)
    return sqlite_utils.Database(conn)


@contextmanager
def setting_up(path: Path | str) -> Iterator[None]:
    """Held while a process sets up a file (journal mode, tables, migrations): processes take turns, so none
    sees a half-made schema or creates a table another has just created."""
    with FileLock(f"{path}.lock", timeout=SETUP_SECONDS):
        yield


def use_wal(db: sqlite_utils.Database) -> None:
    """Readers never wait for the writer. Switching a file's mode needs it to itself: call it while setting up."""
    db.execute("PRAGMA journal_mode=WAL")



def prepare(path: Path | str) -> None:
    """Make sure the studio file at ``path`` exists in WAL mode with every migration applied, taking turns with
    other processes doing the same: for stores that open their own connections (labels, rooms)."""
    db = connect(path)
    try:
        with setting_up(path):
            use_wal(db)
            migrate(db)
    finally:
        db.conn.close()
