"""Model prices in the studio's SQLite file (table ``model_prices``, one row per model name), and the usage of the
LLM calls runs made, read in one query for many runs at once. What the rows mean is ``core.studio.pricing``'s."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from core.engine.store.runs import RunStore

TABLE = "model_prices"
CHUNK = 500  # run ids per query, well under SQLite's limit on bound variables


def price_rows(store: RunStore) -> list[dict[str, Any]]:
    with store.reading() as db:
        return list(db[TABLE].rows_where(order_by="model"))


def put_price(store: RunStore, model: str, input_per_m: float, output_per_m: float, currency: str) -> None:
    with store.writing() as db:
        db[TABLE].upsert(
            {
                "model": model,
                "input_per_m": input_per_m,
                "output_per_m": output_per_m,
                "currency": currency,
                "updated": time.time(),
            },
            pk="model",
        )


def delete_price(store: RunStore, model: str) -> bool:
    """True when the model had a price."""
    with store.writing() as db:
        return db.execute(f"DELETE FROM {TABLE} WHERE model = ?", [model]).rowcount > 0


def model_runs(store: RunStore) -> dict[str, int]:
    """Model name -> how many saved runs it answered, the most recently used first."""
    with store.reading() as db:
        found = db.execute(
            "SELECT model, count(*) FROM runs WHERE model != '' GROUP BY model ORDER BY max(started) DESC"
        ).fetchall()
    return dict(found)


def call_usages(store: RunStore, run_ids: Iterable[str]) -> list[tuple[str, str]]:
    """(run id, usage JSON) of every event of these runs that made an LLM call, in no particular order."""
    ids = list(dict.fromkeys(run_ids))
    found: list[tuple[str, str]] = []
    with store.reading() as db:
        for start in range(0, len(ids), CHUNK):
            part = ids[start : start + CHUNK]
            found += db.execute(
                f"SELECT run_id, usage FROM events WHERE run_id IN ({', '.join('?' for _ in part)}) "
                "AND json_extract(usage, '$.calls') > 0",
                part,
            ).fetchall()
    return found
