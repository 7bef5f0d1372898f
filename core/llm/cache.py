"""Response cache in SQLite, keyed by model + messages + sampling parameters.

It makes replays and tests reproducible and repeated questions free. A row that
cannot be read back is treated as a miss and overwritten.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import sqlite_utils


def cache_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    blob = json.dumps({"model": model, "messages": messages, "params": params}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


class ResponseCache:
    def __init__(self, path: Path | str):
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self.db = sqlite_utils.Database(conn)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.table = self.db.table("responses")
        if not self.table.exists():
            self.table.create(
                {"key": str, "model": str, "text": str, "prompt_tokens": int, "completion_tokens": int, "created": float},
                pk="key",
            )
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            try:
                row = self.table.get(key)
            except sqlite_utils.db.NotFoundError:
                return None
        try:
            text = row["text"]
            if not isinstance(text, str):
                raise TypeError("text is not a string")
            return {"text": text, "prompt_tokens": int(row["prompt_tokens"]), "completion_tokens": int(row["completion_tokens"])}
        except (TypeError, ValueError, KeyError):
            return None  # corrupted row: a miss; the next put rewrites it

    def put(self, key: str, model: str, text: str, prompt_tokens: int, completion_tokens: int) -> None:
        row = {"key": key, "model": model, "text": text, "prompt_tokens": prompt_tokens,
               "completion_tokens": completion_tokens, "created": time.time()}
        with self._lock:
            self.table.upsert(row, pk="key")

    def __len__(self) -> int:
        with self._lock:
            return self.table.count
