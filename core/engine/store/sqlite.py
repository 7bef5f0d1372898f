"""The one way the studio reaches its SQLite files. Every store (runs, benchmark results, labels, annotator names,
rooms, settings, prices, the response cache) opens its file with ``connect`` and writes inside ``transaction``:

- WAL journal: readers never wait for the writer, and the writer never waits for readers.
- One busy timeout, ``BUSY_SECONDS``: a write waits that long for another process's transaction before SQLite
  says "database is locked".
- One transaction style: connections are in autocommit mode, and every write is one ``BEGIN IMMEDIATE``
  transaction, committed whole or rolled back whole. Taking the write lock up front means two writers queue on the
  busy timeout instead of one failing at once when it tries to turn its read into a write.
- Foreign keys are enforced.
- The file is brought up to date before its first use: created if absent, switched to WAL and every migration of
  ``core.engine.store.migrations`` applied, with processes taking turns so several may open a new file at the same moment.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils
from filelock import FileLock

from core.engine.store import migrations
from core.engine.store.migrations import StoreError

BUSY_SECONDS = 30.0  # how long a write waits for another process's transaction before "database is locked"
SETUP_SECONDS = 120.0  # how long opening waits for another process that is bringing the same file up to date


def connect(path: Path | str, *, busy_seconds: float = BUSY_SECONDS) -> sqlite3.Connection:
    """A connection to the studio file at ``path``, brought up to date first; usable from any thread (the caller
    serialises its use). ``busy_seconds`` is for tests that want a short wait."""
    conn = _open(path, busy_seconds)
    try:
        if not _up_to_date(conn):
            with FileLock(f"{path}.lock", timeout=SETUP_SECONDS):  # switching to WAL needs the file to itself
                conn.execute("PRAGMA journal_mode=WAL")
                migrate(sqlite_utils.Database(conn))
    except BaseException:
        conn.close()
        raise
    return conn


def database(path: Path | str) -> sqlite_utils.Database:
    """``connect`` for stores that read and write through sqlite-utils."""
    return sqlite_utils.Database(connect(path))


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write: the write lock taken up front, committed when the block ends, rolled back if it raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:  # an error inside SQLite may have rolled it back already
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def migrate(db: sqlite_utils.Database) -> list[int]:
    """Apply the migrations not yet applied, each in its own transaction that first checks it is still needed, so
    processes opening the same file at once apply each exactly once; returns the numbers applied."""
    db["_migrations"].create({"version": int, "name": str, "applied": float}, pk="version", if_not_exists=True)
    done = {row["version"]: row["name"] for row in db["_migrations"].rows}
    path = db.execute("PRAGMA database_list").fetchone()[2] or "the studio database"
    for version, name, _ in migrations.MIGRATIONS:
        if version in done and done[version] != name:
            raise StoreError(
                f"{path} was written by another version of the studio: its migration {version} is "
                f"“{done[version]}”, this version's is “{name}”. Move the file aside (a new one is "
                "started in its place) or open it with the version that wrote it"
            )
    applied = []
    for version, name, step in migrations.MIGRATIONS:
        if version in done:
            continue
        with transaction(db.conn):
            if db.execute("SELECT 1 FROM _migrations WHERE version = ?", [version]).fetchone() is None:
                try:
                    step(db)
                except sqlite3.OperationalError as exc:
                    raise StoreError(
                        f"{path} could not be brought up to date (migration {version}, {name}): {exc}. "
                        "It may have been changed by another program or version of the studio"
                    ) from exc
                db["_migrations"].insert({"version": version, "name": name, "applied": time.time()})
                applied.append(version)
    return applied


def _open(path: Path | str, busy_seconds: float) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=busy_seconds, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def _up_to_date(conn: sqlite3.Connection) -> bool:
    """Every migration of this version is recorded under its name (one small read: the usual case)."""
    try:
        found = conn.execute("SELECT version, name FROM _migrations ORDER BY version").fetchall()
    except sqlite3.OperationalError:  # a new file: no table yet
        return False
    return found == [(version, name) for version, name, _ in migrations.MIGRATIONS]
