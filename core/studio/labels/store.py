"""Labels in the studio's SQLite file: one current label per (question, snippet, annotator), upserted, and every
change kept in ``label_history``.

Each operation opens its own connection (``core.engine.store.sqlite``), so threads and processes never share one; a write
is one transaction that takes the write lock up front and waits for it (the busy timeout), and a write that still
finds the database locked is retried with backoff. Only when every attempt failed does the caller see
``LabelStoreBusy``, a message, not a traceback.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

from core.engine import paths
from core.engine.store.sqlite import BUSY_SECONDS, connect, transaction
from core.studio.labels.attribution import AttributionLabel, Pair, check_attribution
from core.studio.labels.grades import LabelError, check_annotator, check_grade
from core.studio.labels.identity import QuestionRef
from core.studio.labels.records import FinalLabel, Label

T = TypeVar("T")
ATTEMPTS = 2  # with the busy timeout, a write waits about a minute in all before it gives up


class LabelStoreBusy(LabelError):
    """The database stayed locked through every attempt; nothing was written."""


@dataclass(frozen=True)
class LabelRow:
    """One label to write: the question it belongs to, the snippet, who gave it, the grade and an optional note."""

    question: QuestionRef
    snippet_id: str
    annotator: str
    grade: int
    note: str | None = None  # None keeps the note the label already has


@dataclass(frozen=True)
class Written:
    new: int = 0
    changed: int = 0
    unchanged: int = 0

    def __add__(self, other: Written) -> Written:
        return Written(self.new + other.new, self.changed + other.changed, self.unchanged + other.unchanged)

    def describe(self) -> str:
        return f"{self.new} new, {self.changed} changed, {self.unchanged} unchanged"


def _busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class LabelStore:
    def __init__(self, path: Path | str | None = None, *, busy_timeout: float = BUSY_SECONDS, attempts: int = ATTEMPTS):
        self.path = Path(path or paths.db_path())
        self.busy_timeout = busy_timeout
        self.attempts = attempts
        self._connect().close()  # the file is brought up to date here, not in the middle of a first write

    def _connect(self) -> sqlite3.Connection:
        conn = connect(self.path, busy_seconds=self.busy_timeout)
        conn.row_factory = sqlite3.Row
        return conn

    def _transact(self, work: Callable[[sqlite3.Connection], T]) -> T:
        delay = 0.02
        for attempt in range(1, self.attempts + 1):
            conn = self._connect()
            try:
                with transaction(conn):
                    return work(conn)
            except sqlite3.OperationalError as exc:
                if not _busy(exc):
                    raise
                if attempt == self.attempts:
                    raise LabelStoreBusy(
                        f"The label database stayed busy through {self.attempts} attempts of "
                        f"{self.busy_timeout:g} s each; nothing was saved. Try again."
                    ) from None
                time.sleep(delay * (1 + random.random()))
                delay *= 2
            finally:
                conn.close()
        raise AssertionError("unreachable")

    def _read(self, sql: str, args: Iterable[Any] = ()) -> list[dict[str, Any]]:
        conn = self._connect()
        try:
            return [dict(row) for row in conn.execute(sql, list(args))]
        finally:
            conn.close()

    # -- writing -----------------------------------------------------------------------------

    def set_label(
        self,
        question: QuestionRef,
        snippet_id: str,
        annotator: str,
        grade: int,
        note: str | None = None,
        *,
        source: str = "page",
    ) -> Written:
        return self.set_labels([LabelRow(question, snippet_id, annotator, grade, note)], source=source)

    def set_labels(self, rows: Iterable[LabelRow], *, source: str) -> Written:
        """All rows in one transaction: either every label is written or none is."""
        checked = [_checked(r) for r in rows]

        def work(conn: sqlite3.Connection) -> Written:
            total = Written()
            for row in checked:
                _register(conn, row.question)
                total += _upsert(conn, row, source)
            return total

        return self._transact(work) if checked else Written()

    def set_final(
        self, question: QuestionRef, snippet_id: str, grade: int, adjudicator: str, note: str = ""
    ) -> Written:
        """The adjudicated label of a snippet: one per (question, snippet), recorded as such in the history."""
        row = _checked(LabelRow(question, snippet_id, adjudicator, grade, note))
        return self._transact(lambda conn: _register(conn, question) or _final(conn, row, "adjudication"))

    def import_rows(
        self, labels: Iterable[LabelRow], finals: Iterable[LabelRow], *, source: str
    ) -> dict[tuple[str, str], Written]:
        """Labels and adjudications (``annotator`` is the adjudicator) in one transaction: every one is written or
        none is. What happened per ("label" or "final", name)."""
        labels, finals = [_checked(r) for r in labels], [_checked(r) for r in finals]

        def work(conn: sqlite3.Connection) -> dict[tuple[str, str], Written]:
            done: dict[tuple[str, str], Written] = {}
            for kind, rows, write in (("label", labels, _upsert), ("final", finals, _final)):
                for row in rows:
                    _register(conn, row.question)
                    key = (kind, row.annotator)
                    done[key] = done.get(key, Written()) + write(conn, row, source)
            return done

        return self._transact(work)

    def set_attribution(
        self, pair: Pair, annotator: str, grade: int | str, note: str | None = None, *, source: str = "page"
    ) -> Written:
        """An annotator's attribution label on a claim × snippet pair (upserted; every change in the history)."""
        who, value = check_annotator(annotator), check_attribution(grade)
        return self._transact(lambda conn: _attribute(conn, pair, who, value, note, source))

    # -- reading -----------------------------------------------------------------------------

    def attributions(self, run_ids: Iterable[str] | None = None) -> list[AttributionLabel]:
        rows = self._read("select * from attribution_labels order by run_id, claim_id, snippet_id, annotator")
        wanted = None if run_ids is None else set(run_ids)
        return [
            AttributionLabel(**{f.name: r[f.name] for f in fields(AttributionLabel)})
            for r in rows
            if wanted is None or r["run_id"] in wanted
        ]

    def labels(self, question_ids: Iterable[str] | None = None) -> list[Label]:
        return [Label.from_row(r) for r in self._rows("labels", question_ids)]

    def finals(self, question_ids: Iterable[str] | None = None) -> list[FinalLabel]:
        return [FinalLabel.from_row(r) for r in self._rows("label_finals", question_ids)]

    def _rows(self, table: str, question_ids: Iterable[str] | None) -> list[dict[str, Any]]:
        if question_ids is None:
            return self._read(f"select * from {table} order by question_id, snippet_id")
        ids = list(dict.fromkeys(question_ids))
        found: list[dict[str, Any]] = []
        for start in range(0, len(ids), 500):  # SQLite caps the number of bound parameters
            chunk = ids[start : start + 500]
            found += self._read(
                f"select * from {table} where question_id in ({','.join('?' * len(chunk))}) "
                "order by question_id, snippet_id",
                chunk,
            )
        return found

    def history(self, question_id: str | None = None, mode: str = "relevance") -> list[dict[str, Any]]:
        """Every change of a kind of label (``mode``: relevance, or attribution, whose rows name the run and claim)."""
        where, args = "where mode = ?", [mode]
        if question_id:
            where, args = where + " and question_id = ?", args + [question_id]
        return self._read(f"select * from label_history {where} order by id", args)

    def registered(self) -> dict[str, dict[str, Any]]:
        """Questions that have labels: id -> {qhash, question, options, source}."""
        return {r["question_id"]: r for r in self._read("select * from label_questions")}

    def annotators(self) -> list[str]:
        return [r["annotator"] for r in self._read("select distinct annotator from labels order by annotator")]


def _snippet(snippet_id: str) -> str:
    text = str(snippet_id or "").strip()
    if not text or any(c.isspace() for c in text):
        raise LabelError(f"snippet id {snippet_id!r} must be one word (qrels separates fields by spaces)")
    return text


def _checked(row: LabelRow) -> LabelRow:
    return LabelRow(
        row.question,
        _snippet(row.snippet_id),
        check_annotator(row.annotator),
        check_grade(row.grade),
        None if row.note is None else row.note.strip(),
    )


def _register(conn: sqlite3.Connection, question: QuestionRef) -> None:
    """The first label of a question fixes its id; a question known only by id (an import) gains its text later."""
    conn.execute(
        "insert into label_questions values (?, ?, ?, ?, ?, ?) on conflict (question_id) do update set "
        "qhash = coalesce(label_questions.qhash, excluded.qhash), "
        "question = case when label_questions.question = '' then excluded.question "
        "else label_questions.question end, "
        "options = case when label_questions.question = '' then excluded.options "
        "else label_questions.options end",
        (
            question.question_id,
            question.qhash,
            question.question,
            question.options_json(),
            question.source,
            time.time(),
        ),
    )


def _upsert(conn: sqlite3.Connection, row: LabelRow, source: str) -> Written:
    key = (row.question.question_id, row.snippet_id, row.annotator)
    old = conn.execute(
        "select grade, note from labels where question_id = ? and snippet_id = ? and annotator = ?", key
    ).fetchone()
    note = row.note if row.note is not None else (old["note"] if old else "")
    if old and old["grade"] == row.grade and old["note"] == note:
        return Written(unchanged=1)
    now = time.time()
    conn.execute(
        "insert into labels values (?, ?, ?, ?, ?, ?) on conflict (question_id, snippet_id, annotator) "
        "do update set grade = excluded.grade, note = excluded.note, updated = excluded.updated",
        (*key, row.grade, note, now),
    )
    _history(conn, *key, "label", old, row.grade, note, source, now)
    return Written(changed=1) if old else Written(new=1)


def _final(conn: sqlite3.Connection, row: LabelRow, source: str) -> Written:
    key = (row.question.question_id, row.snippet_id)
    note = row.note or ""
    old = conn.execute("select grade, note from label_finals where question_id = ? and snippet_id = ?", key).fetchone()
    if old and old["grade"] == row.grade and old["note"] == note:
        return Written(unchanged=1)
    now = time.time()
    conn.execute(
        "insert into label_finals values (?, ?, ?, ?, ?, ?) on conflict (question_id, snippet_id) "
        "do update set grade = excluded.grade, note = excluded.note, "
        "adjudicator = excluded.adjudicator, updated = excluded.updated",
        (*key, row.grade, note, row.annotator, now),
    )
    _history(conn, *key, row.annotator, "final", old, row.grade, note, source, now)
    return Written(changed=1) if old else Written(new=1)


def _attribute(
    conn: sqlite3.Connection, pair: Pair, annotator: str, grade: int, note: str | None, source: str
) -> Written:
    key = (*pair.key, annotator)
    old = conn.execute(
        "select grade, note from attribution_labels where run_id = ? and claim_id = ? and snippet_id = ? "
        "and annotator = ?",
        key,
    ).fetchone()
    note = note.strip() if note is not None else (old["note"] if old else "")
    if old and old["grade"] == grade and old["note"] == note:
        return Written(unchanged=1)
    now = time.time()
    conn.execute(
        "insert into attribution_labels (run_id, claim_id, snippet_id, annotator, grade, note, claim, updated) "
        "values (?, ?, ?, ?, ?, ?, ?, ?) on conflict (run_id, claim_id, snippet_id, annotator) "
        "do update set grade = excluded.grade, note = excluded.note, claim = excluded.claim, updated = excluded.updated",
        (*key, grade, note, pair.claim.text, now),
    )
    _history(conn, pair.run_id, pair.document.id, annotator, "label", old, grade, note, source, now, pair.claim.id)
    return Written(changed=1) if old else Written(new=1)


def _history(
    conn: sqlite3.Connection,
    question_id: str,
    snippet_id: str,
    who: str,
    kind: str,
    old: sqlite3.Row | None,
    grade: int,
    note: str,
    source: str,
    now: float,
    claim_id: str = "",
) -> None:
    """One change in the history: of a relevance label, or of an attribution label when ``claim_id`` names its claim
    (``question_id`` is then the claim's run)."""
    conn.execute(
        "insert into label_history (question_id, snippet_id, annotator, kind, old_grade, new_grade, old_note, "
        "new_note, source, time, mode, claim_id) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            question_id,
            snippet_id,
            who,
            kind,
            old["grade"] if old else None,
            grade,
            old["note"] if old else None,
            note,
            source,
            now,
            "attribution" if claim_id else "relevance",
            claim_id,
        ),
    )
