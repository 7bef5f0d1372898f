"""A studio database written by another version of the studio is refused in words, from the command line too."""

import subprocess
import sys
from pathlib import Path

import pytest
import sqlite_utils

from core.engine.store import RunStore
from core.engine.store.migrations import MIGRATIONS, StoreError
from core.engine.store.sqlite import migrate

REPO = Path(__file__).resolve().parents[1]


def other_version_db(path):
    """Migrations 1–3 as this version has them, then a 4th of another version's numbering with its table."""
    db = sqlite_utils.Database(path)
    db["_migrations"].create({"version": int, "name": str, "applied": float}, pk="version")
    for version, name, step in MIGRATIONS[:3]:
        step(db)
        db["_migrations"].insert({"version": version, "name": name, "applied": 0.0})
    db["label_questions"].create({"id": str}, pk="id")
    db["_migrations"].insert({"version": 4, "name": "graded labels", "applied": 0.0})
    db.conn.close()


def test_another_versions_numbering_is_named_and_nothing_is_changed(tmp_path):
    path = tmp_path / "studio.sqlite"
    other_version_db(path)
    with pytest.raises(StoreError, match=r"another version of the studio: its migration 4 is “graded labels”"):
        RunStore(path)
    db = sqlite_utils.Database(path)
    assert [r["version"] for r in db["_migrations"].rows] == [1, 2, 3, 4]  # nothing applied on top


def test_a_step_that_fails_names_the_file_and_the_migration(tmp_path):
    path = tmp_path / "studio.sqlite"
    db = sqlite_utils.Database(path)
    db["comparison_groups"].create({"id": str}, pk="id")  # left by another program: migration 4 cannot create it
    with pytest.raises(StoreError, match=r"could not be brought up to date \(migration 4, comparison groups\)"):
        migrate(db)
    assert [r["version"] for r in db["_migrations"].rows] == [1, 2, 3]


def test_the_command_line_says_it_without_a_traceback(tmp_path):
    other_version_db(tmp_path / "studio.sqlite")
    done = subprocess.run(
        [sys.executable, "-m", "core", "labels", "metrics"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"MEDRAG_STUDIO_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "written by another version of the studio" in done.stderr
