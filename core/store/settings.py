"""Studio-wide settings that every session and process must see the same (the owner's allowances for visitors),
as key-value rows in the studio database."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from core.store.sqlite import BUSY_SECONDS, prepare

_prepared: set[str] = set()


def _connect(path: Path | str) -> sqlite3.Connection:
    if str(path) not in _prepared:  # migrations are checked once per file and process
        prepare(path)
        _prepared.add(str(path))
    return sqlite3.connect(str(path), timeout=BUSY_SECONDS)


def read_setting(path: Path | str, key: str) -> str | None:
    conn = _connect(path)
    try:
        row = conn.execute("SELECT value FROM studio_settings WHERE key = ?", [key]).fetchone()
    finally:
        conn.close()
    return row[0] if row else None


def write_setting(path: Path | str, key: str, value: str) -> None:
    conn = _connect(path)
    try:
        with conn:
            conn.execute("INSERT INTO studio_settings (key, value, updated) VALUES (?, ?, ?) ON CONFLICT (key) "
                         "DO UPDATE SET value = excluded.value, updated = excluded.updated", [key, value, time.time()])
    finally:
        conn.close()
