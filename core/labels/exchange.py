"""Labels in and out: TREC qrels (``question_id 0 snippet_id grade``), CSV and JSONL.

A qrels export gives one grade per judged snippet: the adjudicated label, else the majority (see ``consensus``),
written under every id that carries the snippet's text. CSV and JSONL keep every annotator's label and every
adjudication, with the question and snippet text when a saved run shows them.

Imports check the whole file before writing anything; a bad line is named by its number. Labels for questions or
snippets that no saved run shows are kept (they count as soon as a run shows them) and counted in the report.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from core.labels.grades import GRADES, LabelError, check_annotator, check_grade
from core.labels.identity import QuestionRef
from core.labels.pool import PoolQuestion, consensus, resolve
from core.labels.store import LabelRow, LabelStore, Written

Format = Literal["qrels", "csv", "jsonl"]
FORMATS: tuple[Format, ...] = ("qrels", "csv", "jsonl")
COLUMNS = ["kind", "question_id", "snippet_id", "annotator", "grade", "grade_name", "note", "updated", "question",
           "snippet_text"]
SHOWN_ERRORS = 20


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts or 0, tz=timezone.utc).isoformat(timespec="seconds")


def label_records(questions: list[PoolQuestion], label_rows: list[dict[str, Any]],
                  final_rows: list[dict[str, Any]], registered: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every label and adjudication as one flat record (the CSV/JSONL rows)."""
    texts: dict[tuple[str, str], str] = {}
    question_text = {qid: row["question"] for qid, row in registered.items()}
    for q in questions:
        question_text[q.question_id] = q.ref.question
        for item in q.items:
            for sid in item.ids:
                texts[(q.question_id, sid)] = item.blind_text()
    records = []
    for kind, rows, who in (("label", label_rows, "annotator"), ("final", final_rows, "adjudicator")):
        for row in rows:
            records.append({
                "kind": kind, "question_id": row["question_id"], "snippet_id": row["snippet_id"],
                "annotator": row[who], "grade": row["grade"], "grade_name": GRADES[row["grade"]],
                "note": row["note"] or "", "updated": _when(row["updated"]),
                "question": question_text.get(row["question_id"], ""),
                "snippet_text": texts.get((row["question_id"], row["snippet_id"]), ""),
            })
    return sorted(records, key=lambda r: (r["question_id"], r["snippet_id"], r["kind"], r["annotator"]))


def qrels_grades(questions: list[PoolQuestion], label_rows: list[dict[str, Any]],
                 final_rows: list[dict[str, Any]]) -> dict[tuple[str, str], int]:
    """(question id, snippet id) -> consensus grade; pooled items under each of their ids."""
    grades: dict[tuple[str, str], int] = {}
    covered: set[tuple[str, str]] = set()
    for q in questions:
        labels, _ = resolve(q, label_rows)
        finals, _ = resolve(q, final_rows)
        for item in q.items:
            given = [row["grade"] for row in labels.get(item.pool_id, {}).values()]
            final = finals.get(item.pool_id, {}).get("final")
            grade = consensus(given, final["grade"] if final else None)
            covered |= {(q.question_id, sid) for sid in item.ids}
            if grade is not None:
                grades |= {(q.question_id, sid): grade for sid in item.ids}
    # labels outside every pool (imported, or their runs deleted): grouped by their own ids
    loose: dict[tuple[str, str], list[int]] = {}
    loose_final: dict[tuple[str, str], int] = {}
    for row in label_rows:
        key = (row["question_id"], row["snippet_id"])
        if key not in covered:
            loose.setdefault(key, []).append(row["grade"])
    for row in final_rows:
        key = (row["question_id"], row["snippet_id"])
        if key not in covered:
            loose_final[key] = row["grade"]
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


# -- import -----------------------------------------------------------------------------------


@dataclass
class Parsed:
    labels: list[tuple[int, str, str, str, int, str]] = field(default_factory=list)  # line, qid, sid, who, grade, note
    finals: list[tuple[int, str, str, str, int, str]] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)
    skipped_blank: int = 0


def _one_word(value: Any, name: str) -> str:
    text = str(value or "").strip()
    if not text or any(c.isspace() for c in text):
        raise LabelError(f"{name} {value!r} must be one word")
    return text


def parse_qrels(text: str, annotator: str) -> Parsed:
    """``question_id iteration snippet_id grade`` per line; blank lines and ``#`` comments are skipped."""
    who = check_annotator(annotator)
    parsed = Parsed()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            parsed.skipped_blank += 1
            continue
        fields = line.split()
        if len(fields) != 4:
            parsed.errors.append((number, f"expected 4 fields 'question_id 0 snippet_id grade', found {len(fields)}"))
            continue
        try:
            parsed.labels.append((number, fields[0], fields[2], who, check_grade(fields[3]), ""))
        except LabelError as exc:
            parsed.errors.append((number, str(exc)))
    return parsed


def _record(parsed: Parsed, number: int, raw: dict[str, Any]) -> None:
    try:
        kind = str(raw.get("kind") or "label").strip()
        if kind not in ("label", "final"):
            raise LabelError(f"kind {kind!r} is neither 'label' nor 'final'")
        row = (number, _one_word(raw.get("question_id"), "question_id"), _one_word(raw.get("snippet_id"), "snippet_id"),
               check_annotator(raw.get("annotator")), check_grade(raw.get("grade")), str(raw.get("note") or ""))
        (parsed.finals if kind == "final" else parsed.labels).append(row)
    except LabelError as exc:
        parsed.errors.append((number, str(exc)))


def parse_csv(text: str) -> Parsed:
    parsed = Parsed()
    reader = csv.DictReader(io.StringIO(text))
    missing = {"question_id", "snippet_id", "annotator", "grade"} - set(reader.fieldnames or [])
    if missing:
        parsed.errors.append((1, f"the header lacks the column(s) {', '.join(sorted(missing))}"))
        return parsed
    for raw in reader:
        _record(parsed, reader.line_num, raw)
    return parsed


def parse_jsonl(text: str) -> Parsed:
    parsed = Parsed()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            parsed.skipped_blank += 1
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            parsed.errors.append((number, f"not valid JSON ({exc.msg})"))
            continue
        if not isinstance(raw, dict):
            parsed.errors.append((number, "expected a JSON object"))
            continue
        _record(parsed, number, raw)
    return parsed


def parse(fmt: Format, text: str, annotator: str | None = None) -> Parsed:
    if fmt == "qrels":
        if annotator is None:
            raise LabelError("A qrels file names no annotator: say whose judgments these are.")
        return parse_qrels(text, annotator)
    return parse_csv(text) if fmt == "csv" else parse_jsonl(text)


def guess_format(name: str) -> Format:
    lowered = name.lower()
    if lowered.endswith(".csv"):
        return "csv"
    if lowered.endswith((".jsonl", ".json")):
        return "jsonl"
    return "qrels"


@dataclass
class ImportReport:
    parsed: Parsed
    written: Written | None = None  # None: nothing was written
    unknown_questions: int = 0  # labels whose question no saved run asked
    unknown_snippets: int = 0  # labels whose question is known but whose snippet no saved run showed

    def describe(self) -> str:
        lines = []
        if self.parsed.errors:
            lines.append(f"{len(self.parsed.errors)} line(s) could not be read:")
            lines += [f"  line {n}: {msg}" for n, msg in self.parsed.errors[:SHOWN_ERRORS]]
            if len(self.parsed.errors) > SHOWN_ERRORS:
                lines.append(f"  ... and {len(self.parsed.errors) - SHOWN_ERRORS} more")
        good = len(self.parsed.labels) + len(self.parsed.finals)
        if self.written is None:
            lines.append(f"Nothing was written ({good} good line(s)); fix the lines above, or import the good ones "
                         "anyway." if self.parsed.errors else "Nothing to import.")
        else:
            lines.append(f"Imported {good} label(s): {self.written.describe()}.")
            if self.unknown_questions or self.unknown_snippets:
                lines.append(f"Kept, though no saved run shows them yet: {self.unknown_questions} label(s) for "
                             f"unknown questions, {self.unknown_snippets} for snippets outside their question's pool. "
                             "They count as soon as a run shows those snippets.")
        return "\n".join(lines)


def import_labels(store: LabelStore, questions: list[PoolQuestion], parsed: Parsed, *, source: str,
                  skip_bad: bool = False) -> ImportReport:
    """Writes the parsed labels in one transaction, unless the file had bad lines and ``skip_bad`` is off."""
    report = ImportReport(parsed)
    if (parsed.errors and not skip_bad) or not (parsed.labels or parsed.finals):
        return report
    known = {q.question_id: q for q in questions}
    registered = store.registered()

    def ref(qid: str) -> QuestionRef:
        if qid in known:
            return known[qid].ref
        row = registered.get(qid)
        if row:
            return QuestionRef(qid, row["qhash"], row["question"], json.loads(row["options"] or "{}"), row["source"])
        return QuestionRef(qid, None, "", {}, "import")

    for _, qid, sid, *_ in parsed.labels + parsed.finals:
        if qid not in known:
            report.unknown_questions += 1
        elif sid not in known[qid].by_id:
            report.unknown_snippets += 1
    written = store.set_labels([LabelRow(ref(qid), sid, who, grade, note or None)
                                for _, qid, sid, who, grade, note in parsed.labels], source=source)
    for _, qid, sid, who, grade, note in parsed.finals:
        written += store.set_final(ref(qid), sid, grade, who, note)
    report.written = written
    return report
