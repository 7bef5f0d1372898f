"""Labels out: TREC qrels (``question_id 0 snippet_id grade``), CSV and JSONL (``importing`` reads them back).

A qrels export gives one grade per judged snippet: the adjudicated label, else the majority (see ``consensus``),
written under every id that carries the snippet's text. CSV and JSONL keep every annotator's label and every
adjudication, with the question and snippet text when a saved run shows them.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from typing import Any

from core.studio.labels.grades import GRADES
from core.studio.labels.importing import Format
from core.studio.labels.pool import PoolQuestion, consensus, resolve
from core.studio.labels.records import FinalLabel, Label
from core.studio.labels.store import LabelStore

COLUMNS = [
    "kind",
    "question_id",
    "snippet_id",
    "annotator",
    "grade",
    "grade_name",
    "note",
    "updated",
    "question",
    "snippet_text",
]


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts or 0, tz=UTC).isoformat(timespec="seconds")


def label_records(
    questions: list[PoolQuestion],
    label_rows: list[Label],
    final_rows: list[FinalLabel],
    registered: dict[str, dict[str, Any]],
) -> list[dict[str, Any]]:
    """Every label and adjudication as one flat record (the CSV/JSONL rows)."""
    texts: dict[tuple[str, str], str] = {}
    question_text = {qid: row["question"] for qid, row in registered.items()}
    for q in questions:
        question_text[q.question_id] = q.ref.question
        for item in q.items:
            for sid in item.ids:
                texts[(q.question_id, sid)] = item.blind_text()
    records = []
    for kind, rows in (("label", label_rows), ("final", final_rows)):
        for row in rows:
            records.append(
                {
                    "kind": kind,
                    "question_id": row.question_id,
                    "snippet_id": row.snippet_id,
                    "annotator": row.by,
                    "grade": row.grade,
                    "grade_name": GRADES[row.grade],
                    "note": row.note,
                    "updated": _when(row.updated),
                    "question": question_text.get(row.question_id, ""),
                    "snippet_text": texts.get((row.question_id, row.snippet_id), ""),
                }
            )
    return sorted(records, key=lambda r: (r["question_id"], r["snippet_id"], r["kind"], r["annotator"]))


def qrels_grades(
    questions: list[PoolQuestion], label_rows: list[Label], final_rows: list[FinalLabel]
) -> dict[tuple[str, str], int]:
    """(question id, snippet id) -> consensus grade; pooled items under each of their ids."""
    grades: dict[tuple[str, str], int] = {}
    covered: set[tuple[str, str]] = set()
    for q in questions:
        labels, _ = resolve(q, label_rows)
        finals, _ = resolve(q, final_rows)
        for item in q.items:
            given = [row.grade for row in labels.get(item.pool_id, {}).values()]
            final = finals.get(item.pool_id, {}).get("final")
            grade = consensus(given, final.grade if final else None)
            covered |= {(q.question_id, sid) for sid in item.ids}
            if grade is not None:
                grades |= {(q.question_id, sid): grade for sid in item.ids}
    # labels outside every pool (imported, or their runs deleted): grouped by their own ids
    loose: dict[tuple[str, str], list[int]] = {}
    loose_final: dict[tuple[str, str], int] = {}
    for row in label_rows:
        key = (row.question_id, row.snippet_id)
        if key not in covered:
            loose.setdefault(key, []).append(row.grade)
    for final in final_rows:
        key = (final.question_id, final.snippet_id)
        if key not in covered:
            loose_final[key] = final.grade
    for key in {*loose, *loose_final}:
        grades[key] = consensus(loose.get(key, []), loose_final.get(key))
    return dict(sorted(grades.items()))


def export(fmt: Format, questions: list[PoolQuestion], store: LabelStore) -> str:
    label_rows, final_rows = store.labels(), store.finals()
    if fmt == "qrels":
        grades = qrels_grades(questions, label_rows, final_rows)
        return "".join(f"{qid} 0 {sid} {grade}\n" for (qid, sid), grade in grades.items())
    records = label_records(questions, label_rows, final_rows, store.registered())
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue()
