"""Studio-wide settings that every session and process must see the same (the owner's allowances for visitors),
as key-value rows in the studio database."""

from __future__ import annotations

import time
from pathlib import Path

from core.engine.store.sqlite import connect, transaction


def read_setting(path: Path | str, key: str) -> str | None:
    conn = connect(path)
    try:
        row = conn.execute("SELECT value FROM studio_settings WHERE key = ?", [key]).fetchone()
    finally:
        conn.close()
    return row[0] if row else None


def write_setting(path: Path | str, key: str, value: str) -> None:
    conn = connect(path)
    try:
        with transaction(conn):
            conn.execute(
                "INSERT INTO studio_settings (key, value, updated) VALUES (?, ?, ?) ON CONFLICT (key) "
                "DO UPDATE SET value = excluded.value, updated = excluded.updated",
                [key, value, time.time()],
            )
    finally:
        conn.close()
