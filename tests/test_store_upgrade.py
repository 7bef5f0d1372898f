"""A studio database and a response cache written by the last release before every store shared one connection rule
(its code taken from git, run in a subprocess) upgrade in place: the migrations since apply, no row written then
changes, and each is read back through this version's public functions."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from core.engine.llm.cache import ResponseCache
from core.engine.store import RunStore
from core.engine.store.groups import list_groups
from core.engine.store.migrations import MIGRATIONS
from core.engine.store.prices import price_rows
from core.engine.store.settings import read_setting
from core.engine.trace import Run
from core.studio.eval.results import EvalResults
from core.studio.labels import LabelStore
from core.studio.labels.claims import NameClaims
from core.studio.labels.grades import LabelError
from core.studio.labels.pool import collect
from core.studio.rooms.store import RoomStore
from core.studio.runfiles import provenance
from tests.labels.test_attribution import attribution_pair

REPO = Path(__file__).resolve().parents[1]
RELEASE = "e371dc6"  # migrations 1-9; the cache made its own table; annotations still deleted from
BEFORE = 9


def _copy(folder: Path, name: str, to: Path) -> Path:
    """The file as the release left it, with its write-ahead log if it kept one."""
    for suffix in ("", "-wal"):
        if (folder / f"{name}{suffix}").exists():
            (to / f"{name}{suffix}").write_bytes((folder / f"{name}{suffix}").read_bytes())
    return to / name


def _tables(path: Path) -> dict[str, list[tuple]]:
    """Every row of every table, in a stable order, read with plain sqlite3 (no migration runs)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {name: sorted(conn.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr) for name in names}
    finally:
        conn.close()


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> tuple[Path, dict]:
    """The files the release wrote, and what it said it wrote."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", RELEASE, "core"], capture_output=True, timeout=60)
    if archive.returncode != 0:
        pytest.skip(f"this clone has not commit {RELEASE} (a shallow clone?): {archive.stderr.decode()[:200]}")
    old = tmp_path_factory.mktemp("release")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(old, filter="data")
    folder = tmp_path_factory.mktemp("written")
    done = subprocess.run(
        [sys.executable, str(REPO / "tests" / "release_writer.py"), str(folder)],
        cwd=old,
        env={"PYTHONPATH": str(old), "MEDRAG_STUDIO_HOME": str(folder / "home"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    wrote = json.loads(done.stdout)
    assert wrote["core"] == str(old / "core" / "__init__.py")  # the release's code wrote it, not this version's
    return folder, wrote


def test_the_release_wrote_the_old_schema(release):
    folder, _ = release
    tables = _tables(folder / "studio.sqlite")
    assert sorted(v for v, *_ in tables["_migrations"]) == list(range(1, BEFORE + 1))
    assert "annotations" in tables and "responses" not in tables
    cache = _tables(folder / "llm_cache.sqlite")
    assert set(cache) == {"responses"}  # the cache made its table itself, outside the numbered migrations


def test_a_studio_database_from_the_release_upgrades_and_every_row_reads_back(release, tmp_path):
    folder, wrote = release
    path = _copy(folder, "studio.sqlite", tmp_path)
    before = _tables(path)

    store = RunStore(path)
    after = _tables(path)
    assert sorted(v for v, *_ in after["_migrations"]) == [v for v, _, _ in MIGRATIONS]
    assert "annotations" not in after and after["responses"] == []
    # no row changed: a column added since (the label history's mode) follows the columns it had, with its default
    kept = {t: [row[: len(rows[0])] for row in after[t]] for t, rows in before.items() if rows and t in after}
    assert {t: rows for t, rows in kept.items() if t != "_migrations"} == {
        t: rows for t, rows in before.items() if rows and t not in ("_migrations", "annotations")
    }
    assert {row[-2:] for row in after["label_history"]} == {("relevance", "")}

    runs = [Run.model_validate(r) for r in wrote["runs"]]
    assert [store.load_run(r.id) for r in runs] == runs
    assert [r["id"] for r in store.list_runs()] == [r.id for r in sorted(runs, key=lambda r: -r.started)]
    assert [(g["id"], g["run_ids"]) for g in list_groups(store)] == [(wrote["group"], [r.id for r in runs])]
    assert provenance.entry_for(store, runs[0]).corpora[0].fingerprint == "fp1"
    [row] = EvalResults(store).rows(wrote["eval"]["config"], {("medqa", "q1", wrote["eval"]["asked"])})
    assert (row.run_id, row.predicted, row.correct) == (runs[1].id, "B", 1)
    assert [(p["model"], p["input_per_m"], p["currency"]) for p in price_rows(store)] == [("scripted", 0.15, "EUR")]

    labels = LabelStore(path)
    assert [(r.snippet_id, r.grade, r.note) for r in labels.labels()] == [
        ("s1", 2, "on second reading"),
        ("s2", 1, ""),
    ]
    assert [(r.snippet_id, r.grade, r.adjudicator) for r in labels.finals()] == [("s1", 2, "ben")]
    assert [r["new_grade"] for r in labels.history(wrote["question_id"])] == [3, 1, 2, 2]
    assert labels.attributions() == []  # the release had no attribution labels; a first one goes beside its labels
    [pair] = attribution_pair()
    labels.set_attribution(pair, "ann", "partly", "the dose only")
    assert [(a.snippet_id, a.grade) for a in labels.attributions()] == [(pair.document.id, 1)]
    assert len(labels.labels()) == 2 and len(labels.history(wrote["question_id"])) == 4
    assert sorted(item.pool_id for question in collect(path) for item in question.items) == ["s1", "s2"]
    claims = NameClaims(path)
    assert claims.take("dr  dee", "client-1") == wrote["claimed"]
    with pytest.raises(LabelError, match="Someone else labels as"):
        claims.take("Dr Dee", "client-2")

    rooms, room = RoomStore(path), wrote["room"]
    assert rooms.room(room["code"]).step == 1 and rooms.is_presenter(room["code"], room["presenter"])
    assert rooms.member(room["code"], room["member_token"]).id == room["member"]
    tally = rooms.tally(room["code"])
    assert (tally.predictions, tally.trust) == ({runs[0].id: {"A": 1}}, {"s1": (1, 0)})
    assert json.loads(read_setting(path, "visitor allowances")) == {"ask": True}

    store.delete_run(runs[1].id)  # deleted from the annotations table before it was dropped
    assert [r["id"] for r in store.list_runs()] == [runs[0].id]


def test_a_response_cache_from_the_release_is_read_and_written(release, tmp_path):
    folder, _ = release
    path = _copy(folder, "llm_cache.sqlite", tmp_path)
    before = _tables(path)["responses"]
    cache = ResponseCache(path)
    assert _tables(path)["responses"] == before
    assert cache.get("key-1") == {"text": "B.", "prompt_tokens": 40, "completion_tokens": 2, "finish_reason": "length"}
    cache.put("key-2", "scripted", "A.", 40, 2)
    assert len(ResponseCache(path)) == 2
