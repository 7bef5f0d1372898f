"""Comparisons kept as groups in the store (migration 6): saved, listed newest first, found again by their runs."""

from __future__ import annotations

from types import SimpleNamespace

from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from core.engine.store.groups import group_of, list_groups, save_group
from tests.fakes import ScriptedLLM

MC = Question(text="Which drug treats disease 1?", options={"A": "aspirin", "B": "metformin"})


def _runs(store: RunStore, n: int) -> list[str]:
    return [
        execute("cot", MC, llm=ScriptedLLM().enqueue({"reasoning": "r", "answer": "A"}), store=store).id
        for _ in range(n)
    ]


def test_groups_keep_their_runs_in_column_order_and_survive_a_deleted_run(tmp_path, monkeypatch):
    store = RunStore(tmp_path / "s.sqlite")
    a, b, c = _runs(store, 3)
    saved_at = iter([1_000.0, 1_001.0])  # a second apart, whatever the clock's resolution
    monkeypatch.setattr("core.engine.store.groups.time", SimpleNamespace(time=lambda: next(saved_at)))
    first = save_group(store, [b, a], "first")
    second = save_group(store, [a, b, c], "second")
    groups = list_groups(store)
    assert [g["id"] for g in groups] == [second, first]
    assert groups[0]["run_ids"] == [a, b, c] and groups[0]["methods"] == ["cot"] * 3
    assert group_of(store, [b, a]) == first and group_of(store, [a, b]) is None
    store.delete_run(c)
    assert list_groups(store)[0]["run_ids"] == [a, b]
    reopened = RunStore(tmp_path / "s.sqlite")  # the groups are in the file, not in memory
    assert [g["title"] for g in list_groups(reopened)] == ["second", "first"]


def test_migration_six_is_recorded(tmp_path):
    store = RunStore(tmp_path / "s.sqlite")
    assert 6 in {row["version"] for row in store.db["_migrations"].rows}
