"""Label imports that nobody can use to overwrite someone else's labels: a file is imported under the importer's own
name only, or refused naming whose labels it would have changed; the owner's explicit replace imports under the
names in the file; the report lists per annotator what was added, changed and skipped; files are read as streams
within a size cap."""

from __future__ import annotations

import io
import json

import pytest

from core.__main__ import main
from core.engine.store import RunStore
from core.studio.labels import LabelError, LabelStore, collect
from core.studio.labels.importing import MAX_LINES, Importer, import_labels, lines, parse
from tests.labels.helpers import hit, save_run


@pytest.fixture
def pool():
    store = RunStore()
    save_run(store, "medrag", [hit("s1"), hit("s2")])
    [q] = collect(store.path)
    labels = LabelStore(store.path)
    labels.set_label(q.ref, "s1", "bob", 3, "bob's reason")
    return q, labels


def grades(labels: LabelStore) -> dict[tuple[str, str], int]:
    return {(r.annotator, r.snippet_id): r.grade for r in labels.labels()}


def csv_of(qid: str, *rows: tuple[str, str, int]) -> str:
    return "question_id,snippet_id,annotator,grade\n" + "".join(f"{qid},{s},{who},{g}\n" for who, s, g in rows)


def test_a_file_naming_another_annotator_is_refused_and_says_whose_labels_it_would_have_changed(pool):
    q, labels = pool
    before = grades(labels)
    text = csv_of(q.question_id, ("ann", "s2", 1), ("bob", "s1", 0), ("bob", "s2", 2))
    report = import_labels(labels, [q], parse("csv", text), source="t", importer=Importer("ann"))
    assert report.written is None and grades(labels) == before
    assert "not ann's: bob's labels (1 new, 1 changed). Nothing was imported." in report.describe()
    final = json.dumps(
        {"kind": "final", "question_id": q.question_id, "snippet_id": "s1", "annotator": "ann", "grade": 0}
    )
    report = import_labels(labels, [q], parse("jsonl", final), source="t", importer=Importer("ann"))
    assert report.refused and "ann's adjudications (1 new, 0 changed)" in report.refused and not labels.finals()


def test_an_annotator_imports_their_own_labels_and_the_report_lists_what_happened(pool):
    q, labels = pool
    labels.set_label(q.ref, "s1", "ann", 2, "kept note")
    text = csv_of(q.question_id, ("ann", "s1", 2), ("ann", "s2", 1), ("ann", "s9", 3))
    report = import_labels(labels, [q], parse("csv", text), source="t", importer=Importer("ann"))
    assert report.describe().splitlines() == [
        "Imported 3 label(s): 2 added, 0 changed, 1 skipped (already so).",
        "  ann's labels: 2 added, 0 changed, 1 skipped",
        (
            "Kept, though no saved run shows them yet: 0 label(s) for unknown questions, 1 for snippets outside their "
            "question's pool. They count as soon as a run shows those snippets."
        ),
    ]
    assert grades(labels)[("ann", "s2")] == 1 and grades(labels)[("bob", "s1")] == 3
    assert (
        next(r.note for r in labels.labels() if r.annotator == "ann" and r.snippet_id == "s1") == "kept note"
    )  # a file with no note keeps the label's own


def test_the_owners_explicit_replace_imports_under_the_names_in_the_file(pool):
    q, labels = pool
    qid = q.question_id
    text = f"question_id,snippet_id,annotator,grade,kind\n{qid},s1,bob,0,label\n{qid},s2,cy,2,label\n{qid},s2,chief,1,final\n"
    report = import_labels(labels, [q], parse("csv", text), source="t", importer=Importer("owner", replace=True))
    assert report.describe().splitlines()[1:] == [
        "  bob's labels: 0 added, 1 changed, 0 skipped",
        "  chief's adjudications: 1 added, 0 changed, 0 skipped",
        "  cy's labels: 1 added, 0 changed, 0 skipped",
    ]
    assert grades(labels) == {("bob", "s1"): 0, ("cy", "s2"): 2}
    assert [(r.snippet_id, r.grade, r.adjudicator) for r in labels.finals()] == [("s2", 1, "chief")]


def test_the_command_line_imports_as_the_one_who_says_so(pool, tmp_path, capsys):
    q, labels = pool
    path = tmp_path / "theirs.qrels"
    path.write_text(f"{q.question_id} 0 s1 1\n")
    assert main(["labels", "import", str(path), "--annotator", "bob", "--as", "ann"]) == 1
    assert "holds labels that are not ann's: bob's labels (0 new, 1 changed)" in capsys.readouterr().out
    assert grades(labels)[("bob", "s1")] == 3
    assert main(["labels", "import", str(path), "--annotator", "bob", "--as", "ann", "--replace"]) == 0
    assert "bob's labels: 0 added, 1 changed, 0 skipped" in capsys.readouterr().out
    csv_path = tmp_path / "mine.csv"
    csv_path.write_text(csv_of(q.question_id, ("ann", "s2", 2)))
    assert main(["labels", "import", str(csv_path)]) == 2
    assert "say who is importing with --as NAME" in capsys.readouterr().err
    assert main(["labels", "import", str(csv_path), "--as", "ann"]) == 0 and grades(labels)[("ann", "s2")] == 2


def test_a_label_file_is_read_as_a_stream_within_its_caps():
    million = io.BytesIO(b"".join(b"q/1 0 s%d 2\n" % i for i in range(1_000_000)))  # 15 MB: under the size cap
    with pytest.raises(LabelError, match=f"more than {MAX_LINES:,} lines"):
        parse("qrels", million, "ann")
    read_to = million.tell()
    assert read_to < million.getbuffer().nbytes / 3  # refused at the line cap, not after reading the whole file
    with pytest.raises(LabelError, match="the file is larger than 1 MB"):
        list(lines(io.BytesIO((b"x" * 999 + b"\n") * 1100), [], max_bytes=2**20))
    with pytest.raises(LabelError, match="line 2 is longer than 64 KB"):
        parse("jsonl", b"{}\n" + b"{" * 70_000 + b"\n")


def test_every_undecodable_line_of_a_label_file_is_named_not_only_the_first():
    # the reading stopped at line 2, so lines 4 and 5 went unreported
    jsonl = b'{"question_id": "q/1", "snippet_id": "s1", "annotator": "ann", "grade": 2}\n'
    parsed = parse("jsonl", jsonl + b"caf\xe9\n" + jsonl + b"\xff\n{broken\n\n")
    assert parsed.errors == [
        (2, "not UTF-8 text (byte 4)"),
        (4, "not UTF-8 text (byte 1)"),
        (5, "not valid JSON (Expecting property name enclosed in double quotes)"),
    ]
    assert len(parsed.labels) == 2 and parsed.skipped_blank == 1
    qrels = parse("qrels", b"q/1 0 s1 2\n\xfe 0 s2 1\nq/1 0 s3\n", "ann")
    assert qrels.errors == [
        (2, "not UTF-8 text (byte 1)"),
        (3, "expected 4 fields 'question_id 0 snippet_id grade', found 3"),
    ]
    header = "question_id,snippet_id,annotator,grade\n".encode()
    csv_ = parse("csv", header + b"q/1,s1,ann,2\nq/1,s\xff,ann,1\nq/1,s3,ann,9\n")
    assert [n for n, _ in csv_.errors] == [3, 4] and csv_.errors[0][1] == "not UTF-8 text (byte 6)"
