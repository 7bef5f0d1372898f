"""Comparisons kept as groups: the runs of two or three methods on one question, reopened side by side."""

from __future__ import annotations

import time
import uuid
from typing import Any

from core.engine.store.runs import RunStore


def save_group(store: RunStore, run_ids: list[str], title: str) -> str:
    """Keeps the runs (in their column order) as one comparison; returns its id."""
    group_id = uuid.uuid4().hex[:12]
    with store.writing() as db:
        db["comparison_groups"].insert({"id": group_id, "title": title, "created": time.time()})
        db["comparison_runs"].insert_all(
            {"group_id": group_id, "position": i, "run_id": run_id} for i, run_id in enumerate(run_ids)
        )
    return group_id


def list_groups(store: RunStore, limit: int = 200) -> list[dict[str, Any]]:
    """Newest first, each with its run ids in column order (only runs still saved)."""
    with store.reading() as db:
        groups = list(db["comparison_groups"].rows_where(order_by="created desc", limit=limit))
        members = db.execute(
            "select c.group_id, c.run_id, r.method from comparison_runs c join runs r on r.id = c.run_id "
            "order by c.group_id, c.position"
        ).fetchall()
    runs: dict[str, list[tuple[str, str]]] = {}
    for group_id, run_id, method in members:
        runs.setdefault(group_id, []).append((run_id, method))
    return [
        {**g, "run_ids": [r for r, _ in runs.get(g["id"], [])], "methods": [m for _, m in runs.get(g["id"], [])]}
        for g in groups
    ]


def group_of(store: RunStore, run_ids: list[str]) -> str | None:
    """The id of a saved comparison of exactly these runs, if there is one."""
    return next((g["id"] for g in list_groups(store, limit=1000) if g["run_ids"] == list(run_ids)), None)
