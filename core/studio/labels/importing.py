"""Labels in: a TREC qrels, CSV or JSONL file, read as a stream within a size cap, checked whole before anything is
written, and written only under the name of the person importing it.

A file may name annotators (a CSV ``annotator`` column, a JSONL record's ``annotator``, the name given for a qrels
file) and adjudications (``kind`` "final"). An import adds or changes labels only under the importer's own name;
a file that would touch anyone else's labels, or any adjudication, is refused with who it would have changed, unless
the importer holds the right to import under the names in the file (the owner, asking for it explicitly). Bad lines
are named by number; labels for questions or snippets no saved run shows are kept and counted.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Literal

from core.studio.labels.grades import LabelError, check_annotator, check_grade
from core.studio.labels.identity import QuestionRef
from core.studio.labels.pool import PoolQuestion
from core.studio.labels.store import LabelRow, LabelStore, Written

Format = Literal["qrels", "csv", "jsonl"]
FORMATS: tuple[Format, ...] = ("qrels", "csv", "jsonl")
MAX_FILE_BYTES = 16 * 2**20  # a study of 50 questions × 40 snippets × 10 annotators is about 2 MB of CSV
MAX_LINES = 200_000
MAX_LINE_BYTES = 64 * 2**10  # a note of a few paragraphs
SHOWN_ERRORS = 20
Line = tuple[int, str, str, str, int, str]  # line number, question id, snippet id, name, grade, note


@dataclass
class Parsed:
    labels: list[Line] = field(default_factory=list)
    finals: list[Line] = field(default_factory=list)  # the name is the adjudicator's
    errors: list[tuple[int, str]] = field(default_factory=list)
    skipped_blank: int = 0


# -- reading within the caps --------------------------------------------------------------------


def lines(stream: BinaryIO, undecodable: list[tuple[int, str]], *, max_bytes: int = MAX_FILE_BYTES) -> Iterator[str]:
    """The stream's lines as text, read one at a time; a ``LabelError`` as soon as a cap is passed. A line that is
    not UTF-8 goes into ``undecodable`` (number, problem) and a blank line takes its place, so the lines after it
    are still read and their numbers stay right."""
    total = 0
    for number in range(1, MAX_LINES + 2):
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        total += len(raw)
        if total > max_bytes:
            raise LabelError(
                f"the file is larger than {max_bytes / 2**20:,.0f} MB, the most a label file may be; "
                "split it and import the parts"
            )
        if number > MAX_LINES:
            raise LabelError(
                f"the file has more than {MAX_LINES:,} lines, the most a label file may have; split it "
                "and import the parts"
            )
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise LabelError(f"line {number} is longer than {MAX_LINE_BYTES // 1024} KB")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            undecodable.append((number, f"not UTF-8 text (byte {exc.start + 1})"))
            text = "\n"
        yield text


def _one_word(value: Any, name: str) -> str:
    text = str(value or "").strip()
    if not text or any(c.isspace() for c in text):
        raise LabelError(f"{name} {value!r} must be one word")
    return text


def _parse_qrels(text: Iterator[str], annotator: str) -> Parsed:
    """``question_id iteration snippet_id grade`` per line; blank lines and ``#`` comments are skipped."""
    who = check_annotator(annotator)
    parsed = Parsed()
    for number, line in enumerate(text, 1):
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
        row = (
            number,
            _one_word(raw.get("question_id"), "question_id"),
            _one_word(raw.get("snippet_id"), "snippet_id"),
            check_annotator(raw.get("annotator")),
            check_grade(raw.get("grade")),
            str(raw.get("note") or ""),
        )
        (parsed.finals if kind == "final" else parsed.labels).append(row)
    except LabelError as exc:
        parsed.errors.append((number, str(exc)))


def _parse_csv(text: Iterator[str]) -> Parsed:
    parsed = Parsed()
    reader = csv.DictReader(text)
    missing = {"question_id", "snippet_id", "annotator", "grade"} - set(reader.fieldnames or [])
    if missing:
        parsed.errors.append((1, f"the header lacks the column(s) {', '.join(sorted(missing))}"))
        return parsed
    for raw in reader:
        _record(parsed, reader.line_num, raw)
    return parsed


def _parse_jsonl(text: Iterator[str]) -> Parsed:
    parsed = Parsed()
    for number, line in enumerate(text, 1):
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


def parse(fmt: Format, source: str | bytes | BinaryIO, annotator: str | None = None) -> Parsed:
    """A whole file (text, bytes or a binary stream such as an upload) parsed line by line within the caps."""
    if isinstance(source, str):
        source = source.encode("utf-8")
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    if fmt == "qrels" and annotator is None:
        raise LabelError("A qrels file names no annotator: say whose judgments these are.")
    undecodable: list[tuple[int, str]] = []
    text = lines(stream, undecodable)
    parsed = (
        _parse_qrels(text, annotator) if fmt == "qrels" else _parse_csv(text) if fmt == "csv" else _parse_jsonl(text)
    )
    if fmt != "csv":  # qrels and JSONL count blank lines; the blanks standing in for undecodable ones are not
        parsed.skipped_blank -= len(undecodable)
    parsed.errors = sorted(parsed.errors + undecodable)
    return parsed


def guess_format(name: str) -> Format:
    lowered = name.lower()
    if lowered.endswith(".csv"):
        return "csv"
    if lowered.endswith((".jsonl", ".json")):
        return "jsonl"
    return "qrels"


# -- whose labels an import touches -------------------------------------------------------------


@dataclass(frozen=True)
class Importer:
    """Who imports. ``replace``: import under the names in the file, adjudications included (only the owner may
    ask for it, and must ask explicitly); otherwise only ``name``'s own labels are added or changed."""

    name: str
    replace: bool = False


def _plan(store: LabelStore, parsed: Parsed) -> dict[tuple[str, str], Written]:
    """What the import would do per ("label" or "final", name), from the labels as they are now."""
    qids = {row[1] for row in parsed.labels + parsed.finals}
    now = {("label", r.question_id, r.snippet_id, r.annotator): (r.grade, r.note) for r in store.labels(qids)}
    now |= {("final", r.question_id, r.snippet_id, ""): (r.grade, r.note) for r in store.finals(qids)}
    plan: dict[tuple[str, str], Written] = {}
    for kind, rows in (("label", parsed.labels), ("final", parsed.finals)):
        for _, qid, sid, who, grade, note in rows:
            old = now.get((kind, qid, sid, who if kind == "label" else ""))
            kept_note = note.strip() or (
                old[1] if old and kind == "label" else ""
            )  # a label's empty note keeps its own
            step = (
                Written(new=1)
                if old is None
                else Written(unchanged=1)
                if old == (grade, kept_note)
                else Written(changed=1)
            )
            plan[(kind, who)] = plan.get((kind, who), Written()) + step
    return plan


def _by_name(item: tuple[tuple[str, str], Written]) -> tuple[str, str]:
    (kind, who), _ = item
    return who, kind


def _whose(kind: str, who: str) -> str:
    return f"{who}'s adjudications" if kind == "final" else f"{who}'s labels"


def refusal(plan: dict[tuple[str, str], Written], importer: Importer) -> str | None:
    """Why this import may not go ahead, naming whose labels it would have changed; None when it may."""
    if importer.replace:
        return None
    others = {key: w for key, w in plan.items() if key[0] == "final" or key[1] != importer.name}
    if not others:
        return None
    touched = "; ".join(
        f"{_whose(kind, who)} ({w.new} new, {w.changed} changed)"
        for (kind, who), w in sorted(others.items(), key=_by_name)
    )
    return (
        f"This file holds labels that are not {importer.name}'s: {touched}. Nothing was imported. An import adds "
        f"labels only under the name of the person importing it; only the owner can import under the names in "
        "a file (with its replace option)."
    )


@dataclass
class ImportReport:
    parsed: Parsed
    importer: str = ""
    written: dict[tuple[str, str], Written] | None = None  # None: nothing was written
    refused: str | None = None  # why nothing was written, when it touched others' labels
    unknown_questions: int = 0  # labels whose question no saved run asked
    unknown_snippets: int = 0  # labels whose question is known but whose snippet no saved run showed

    @property
    def total(self) -> Written:
        return sum((self.written or {}).values(), Written())

    def describe(self) -> str:
        lines_ = []
        if self.parsed.errors:
            lines_.append(f"{len(self.parsed.errors)} line(s) could not be read:")
            lines_ += [f"  line {n}: {msg}" for n, msg in self.parsed.errors[:SHOWN_ERRORS]]
            if len(self.parsed.errors) > SHOWN_ERRORS:
                lines_.append(f"  ... and {len(self.parsed.errors) - SHOWN_ERRORS} more")
        good = len(self.parsed.labels) + len(self.parsed.finals)
        if self.refused:
            lines_.append(self.refused)
        elif self.written is None:
            lines_.append(
                f"Nothing was written ({good} good line(s)); fix the lines above, or import the good ones anyway."
                if self.parsed.errors
                else "Nothing to import."
            )
        else:
            lines_.append(
                f"Imported {good} label(s): {self.total.new} added, {self.total.changed} changed, "
                f"{self.total.unchanged} skipped (already so)."
            )
            lines_ += [
                f"  {_whose(kind, who)}: {w.new} added, {w.changed} changed, {w.unchanged} skipped"
                for (kind, who), w in sorted(self.written.items(), key=_by_name)
            ]
            if self.unknown_questions or self.unknown_snippets:
                lines_.append(
                    f"Kept, though no saved run shows them yet: {self.unknown_questions} label(s) for "
                    f"unknown questions, {self.unknown_snippets} for snippets outside their question's "
                    "pool. They count as soon as a run shows those snippets."
                )
        return "\n".join(lines_)


def import_labels(
    store: LabelStore,
    questions: list[PoolQuestion],
    parsed: Parsed,
    *,
    source: str,
    importer: Importer,
    skip_bad: bool = False,
) -> ImportReport:
    """Writes the parsed labels in one transaction, unless the file had bad lines and ``skip_bad`` is off, or it
    touches labels that are not the importer's (see ``refusal``)."""
    report = ImportReport(parsed, importer=importer.name)
    if (parsed.errors and not skip_bad) or not (parsed.labels or parsed.finals):
        return report
    report.refused = refusal(_plan(store, parsed), importer)
    if report.refused:
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
    rows = {
        kind: [LabelRow(ref(qid), sid, who, grade, note or None) for _, qid, sid, who, grade, note in found]
        for kind, found in (("label", parsed.labels), ("final", parsed.finals))
    }
    report.written = store.import_rows(rows["label"], rows["final"], source=source)
    return report
