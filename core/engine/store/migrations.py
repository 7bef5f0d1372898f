"""Numbered schema migrations of the studio's SQLite files (applied by ``core.engine.store.sqlite``). Append new ones; never
edit an applied one. A migration is a fact of the file format: it imports nothing from the layers above the store,
and copies any logic it needs as it stood when the migration was written."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

import sqlite_utils


class StoreError(RuntimeError):
    """The studio database cannot be brought up to date as it is (said in words, never as a traceback)."""


def _m001_initial(db: sqlite_utils.Database) -> None:
    db["runs"].create(
        {
            "id": str,
            "method": str,
            "params": str,
            "question": str,
            "options": str,
            "model": str,
            "corpus": str,
            "started": float,
            "finished": float,
            "status": str,
            "answer": str,
            "totals": str,
            "parent_id": str,
        },
        pk="id",
    )
    db["runs"].create_index(["started"])
    db["events"].create(
        {
            "run_id": str,
            "seq": int,
            "stage": str,
            "agent": str,
            "kind": str,
            "payload": str,
            "usage": str,
            "time": float,
        },
        pk=("run_id", "seq"),
        foreign_keys=[("run_id", "runs", "id")],
    )
    db["annotations"].create(
        {
            "id": int,
            "run_id": str,
            "event_seq": int,
            "snippet_id": str,
            "annotator": str,
            "label": str,
            "note": str,
            "time": float,
        },
        pk="id",
        foreign_keys=[("run_id", "runs", "id")],
    )
    db["annotations"].create_index(["run_id", "snippet_id"])


def _m002_eval_items(db: sqlite_utils.Database) -> None:
    # One row per (method configuration, dataset, question): what makes a benchmark resumable. No foreign key
    # to runs, so deleting a run stays possible; the row then keeps its scores without the trace.
    db["eval_items"].create(
        {
            "config": str,
            "method": str,
            "dataset": str,
            "qid": str,
            "run_id": str,
            "model": str,
            "params": str,
            "corpus": str,
            "gold": str,
            "predicted": str,
            "correct": int,
            "status": str,
            "error_type": str,
            "calls": int,
            "retrievals": int,
            "prompt_tokens": int,
            "completion_tokens": int,
            "seconds": float,
            "finished": float,
        },
        pk=("config", "dataset", "qid"),
    )


def _m003_run_owner(db: sqlite_utils.Database) -> None:
    # Which process runs a run (host, pid, that process's start time): a run left "running" by a process that
    # is gone is marked interrupted, while one that a live process (the app, an evaluation) is writing is not.
    db["runs"].add_column("owner_host", str)
    db["runs"].add_column("owner_pid", int)
    db["runs"].add_column("owner_started", float)
    db["runs"].create_index(["status"])


def _m004_comparison_groups(db: sqlite_utils.Database) -> None:
    # A comparison: the runs of two or three methods on one question, reopened side by side. Deleting a run
    # leaves the group with the runs that remain.
    db["comparison_groups"].create({"id": str, "title": str, "created": float}, pk="id")
    db["comparison_runs"].create(
        {"group_id": str, "position": int, "run_id": str},
        pk=("group_id", "position"),
        foreign_keys=[("group_id", "comparison_groups", "id")],
    )
    db["comparison_runs"].create_index(["run_id"])


def _m005_labels(db: sqlite_utils.Database) -> None:
    # Labels belong to (question, snippet, annotator), not to a run: every run of a question is scored from the same
    # judgments (pooling, as TREC does). One current label per key; every change is kept in label_history.
    db["label_questions"].create(
        {
            "question_id": str,
            "qhash": str,
            "question": str,
            "options": str,
            "source": str,
            "created": float,
        },
        pk="question_id",
    )
    db["label_questions"].create_index(["qhash"], unique=True)
    db["labels"].create(
        {
            "question_id": str,
            "snippet_id": str,
            "annotator": str,
            "grade": int,
            "note": str,
            "updated": float,
        },
        pk=("question_id", "snippet_id", "annotator"),
        not_null={"grade"},
    )
    db["label_finals"].create(
        {
            "question_id": str,
            "snippet_id": str,
            "grade": int,
            "note": str,
            "adjudicator": str,
            "updated": float,
        },
        pk=("question_id", "snippet_id"),
        not_null={"grade"},
    )
    db["label_history"].create(
        {
            "id": int,
            "question_id": str,
            "snippet_id": str,
            "annotator": str,
            "kind": str,
            "old_grade": int,
            "new_grade": int,
            "old_note": str,
            "new_note": str,
            "source": str,
            "time": float,
        },
        pk="id",
    )
    db["label_history"].create_index(["question_id", "snippet_id"])


def _asked_key_v6(question: str, options: dict[str, str], gold: str) -> str:
    """What identified a benchmark question as asked when migration 6 was written (``core.studio.eval.keys.asked_key``).
    Copied, not imported: the store sits below eval, and this migration must go on giving old rows the key they were
    given then even if the live key changes one day (a change that needs its own migration to re-key rows)."""
    blob = json.dumps([question, list(options.items()), gold], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _m006_eval_asked_and_presets(db: sqlite_utils.Database) -> None:
    # Benchmark results are keyed by what was asked (question, options, gold), not only by the question id, and
    # carry the name of the ablation preset they were run for. Rows from before get the key of what their run's
    # trace says was asked (with the gold they were scored against); a row whose run was deleted gets an empty
    # key, which matches no question, so that question runs again rather than being scored blind.
    items = db["eval_items"]
    items.add_column("asked", str)
    items.add_column("preset", str)
    found = list(
        db.query(
            "select e.rowid as row, e.gold, r.question, r.options from eval_items e left join runs r on r.id = e.run_id"
        )
    )
    for row in found:
        key = "" if row["question"] is None else _asked_key_v6(row["question"], json.loads(row["options"]), row["gold"])
        db.execute("update eval_items set asked = ?, preset = '' where rowid = ?", [key, row["row"]])
    items.transform(pk=("config", "dataset", "qid", "asked"))


def _m007_workshop(db: sqlite_utils.Database) -> None:
    # Where a run came from (imported from a file, or recorded for the workshop pack): the backend that answered
    # and the corpora's index fingerprints. Rooms of a live workshop: the presenter's step, the members (tokens
    # kept as hashes, so a reload rejoins without a login), their predictions per step and snippet-trust votes.
    for sql in (
        """CREATE TABLE run_provenance (run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
           backend TEXT NOT NULL DEFAULT '', corpora TEXT NOT NULL DEFAULT '[]', case_id TEXT, source TEXT,
           imported_at REAL, exported_at REAL, variation TEXT)""",
        """CREATE TABLE rooms (code TEXT PRIMARY KEY, title TEXT NOT NULL, presenter_hash TEXT NOT NULL,
           source TEXT NOT NULL, run_ids TEXT NOT NULL, case_id TEXT, step INTEGER NOT NULL DEFAULT 0,
           steps INTEGER NOT NULL, created REAL NOT NULL, updated REAL NOT NULL)""",
        """CREATE TABLE room_members (id INTEGER PRIMARY KEY, room_code TEXT NOT NULL REFERENCES rooms(code)
           ON DELETE CASCADE, name TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE, joined REAL NOT NULL,
           last_seen REAL NOT NULL)""",
        "CREATE INDEX room_members_room ON room_members(room_code)",
        """CREATE TABLE room_predictions (room_code TEXT NOT NULL REFERENCES rooms(code) ON DELETE CASCADE,
           member_id INTEGER NOT NULL REFERENCES room_members(id) ON DELETE CASCADE, run_id TEXT NOT NULL,
           step INTEGER NOT NULL, option TEXT NOT NULL, time REAL NOT NULL,
           PRIMARY KEY (room_code, member_id, run_id, step))""",
        """CREATE TABLE room_trust (room_code TEXT NOT NULL REFERENCES rooms(code) ON DELETE CASCADE,
           member_id INTEGER NOT NULL REFERENCES room_members(id) ON DELETE CASCADE, snippet_id TEXT NOT NULL,
           trust INTEGER NOT NULL, step INTEGER NOT NULL, time REAL NOT NULL,
           PRIMARY KEY (room_code, member_id, snippet_id))""",
    ):
        db.execute(sql)


def _m008_shared_mode(db: sqlite_utils.Database) -> None:
    # A studio served to others: the owner's settings that every session must see the same (what visitors may do),
    # and the annotator names in use, each held by the client that first labelled under it (kept as a hash), so
    # nobody else can label under it.
    for sql in (
        "CREATE TABLE studio_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated REAL NOT NULL)",
        """CREATE TABLE annotator_claims (name_key TEXT PRIMARY KEY, name TEXT NOT NULL, holder_hash TEXT NOT NULL,
           claimed REAL NOT NULL)""",
    ):
        db.execute(sql)


def _m009_model_prices(db: sqlite_utils.Database) -> None:
    # What the user pays their provider per million tokens of a model (keyed by the model name a run records), so a
    # run's cost can be shown in money. Entered by the user, never shipped; a model with no row has no price.
    db.execute("""CREATE TABLE model_prices (model TEXT PRIMARY KEY, input_per_m REAL NOT NULL CHECK (input_per_m >= 0),
                  output_per_m REAL NOT NULL CHECK (output_per_m >= 0), currency TEXT NOT NULL DEFAULT 'USD',
                  updated REAL NOT NULL)""")


def _m010_response_cache(db: sqlite_utils.Database) -> None:
    # The response cache (core/engine/llm/cache.py): accepted replies keyed by backend + messages + sampling parameters,
    # with how each ended. The cache created this table itself before it was numbered here, so a file that has it
    # keeps its rows, and one from before finish reasons were kept gains the column (its rows replay as finished).
    responses = db["responses"]
    responses.create(
        {
            "key": str,
            "model": str,
            "text": str,
            "prompt_tokens": int,
            "completion_tokens": int,
            "created": float,
            "finish_reason": str,
        },
        pk="key",
        if_not_exists=True,
    )
    if "finish_reason" not in responses.columns_dict:
        responses.add_column("finish_reason", str)


def _m011_drop_annotations(db: sqlite_utils.Database) -> None:
    # Per-run annotations (migration 1) were planned and never written by any version; labels are graded per
    # question and snippet (migration 5). The table is dropped so no code keeps deleting from it.
    db.execute("DROP TABLE annotations")


def _m012_attribution_labels(db: sqlite_utils.Database) -> None:
    # Attribution labels: does a snippet support a claim of a run's answer (2 supports, 1 partly, 0 no)? A claim
    # belongs to its run (its id is the run's), so the key is (run, claim, snippet, annotator), beside the relevance
    # labels' (question, snippet, annotator). Both kinds share the history, told apart by its new ``mode`` column;
    # rows written before it are relevance labels, and an added column leaves them as they were.
    db["attribution_labels"].create(
        {
            "run_id": str,
            "claim_id": str,
            "snippet_id": str,
            "annotator": str,
            "grade": int,
            "note": str,
            "claim": str,
            "updated": float,
        },
        pk=("run_id", "claim_id", "snippet_id", "annotator"),
        not_null={"grade"},
    )
    db["label_history"].add_column("mode", str, not_null_default="relevance")
    db["label_history"].add_column("claim_id", str, not_null_default="")


MIGRATIONS: list[tuple[int, str, Callable[[sqlite_utils.Database], None]]] = [
    (1, "runs, events, annotations", _m001_initial),
    (2, "benchmark items", _m002_eval_items),
    (3, "run owners", _m003_run_owner),
    (4, "comparison groups", _m004_comparison_groups),
    (5, "graded labels per question, snippet and annotator; adjudications; label history", _m005_labels),
    (6, "benchmark results keyed by what was asked; ablation presets", _m006_eval_asked_and_presets),
    (7, "run provenance, workshop rooms and votes", _m007_workshop),
    (8, "shared mode: owner's settings and annotator names in use", _m008_shared_mode),
    (9, "model prices per million tokens", _m009_model_prices),
    (10, "response cache", _m010_response_cache),
    (11, "drop the unused annotations table", _m011_drop_annotations),
    (
        12,
        "attribution labels per run, claim, snippet and annotator; a mode on the label history",
        _m012_attribution_labels,
    ),
]
