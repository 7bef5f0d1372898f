"""Response cache in SQLite, keyed by backend + messages + sampling parameters.

It makes replays and tests reproducible and repeated questions free. Only accepted replies are put in it
(see ``LLM._keep``), with how they ended, so a replayed reply the token budget cut off still says so. A row that
cannot be read back is treated as a miss and overwritten.

Its table (``responses``, migration 10) is part of the studio's one schema, reached like every store's through
``core.engine.store.sqlite``; the studio keeps it in a file of its own (``paths.llm_cache_path``) beside the studio
database. Replies are derived data: deleting that file empties the cache and loses nothing else, and a cache
written once can serve many studio databases (tests share one across theirs). Every LLM call of every thread
writes to it, so it has its own write lock and never queues behind runs and labels.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any

import sqlite_utils

from core.engine.store.sqlite import database, transaction


def cache_key(backend: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    blob = json.dumps({"model": backend, "messages": messages, "params": params}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


class ResponseCache:
    def __init__(self, path: Path | str):
        self.db = database(path)
        self.table = self.db.table("responses")
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
            return {
                "text": text,
                "prompt_tokens": int(row["prompt_tokens"]),
                "completion_tokens": int(row["completion_tokens"]),
                "finish_reason": row.get("finish_reason") or "stop",
            }  # rows from before it was kept finished
        except (TypeError, ValueError, KeyError):
            return None  # corrupted row: a miss; the next put rewrites it

    def put(
        self, key: str, model: str, text: str, prompt_tokens: int, completion_tokens: int, finish_reason: str = "stop"
    ) -> None:
        row = {
            "key": key,
            "model": model,
            "text": text,
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "created": time.time(),
            "finish_reason": finish_reason,
        }
        with self._lock, transaction(self.db.conn):
            self.table.upsert(row, pk="key")

    def delete(self, key: str) -> None:
        with self._lock, transaction(self.db.conn):
            self.table.delete_where("key = ?", [key])

    def __len__(self) -> int:
        with self._lock:
            return self.table.count
