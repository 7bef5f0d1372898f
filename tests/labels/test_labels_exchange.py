"""qrels / CSV / JSONL out and in, through the command line (``python -m core labels ...``) and the library."""

from __future__ import annotations

import csv
import io
import json

import pytest

from core.__main__ import main
from core.engine.store import RunStore
from core.studio.labels import LabelStore, collect
from core.studio.labels.exchange import export
from core.studio.labels.importing import Importer, import_labels, parse
from tests.labels.helpers import hit, save_run


@pytest.fixture
def labelled():
    store = RunStore()
    run = save_run(store, "medrag", [hit("s1"), hit("s2"), hit("copy", "text of s1")])
    [q] = collect(store.path)
    labels = LabelStore(store.path)
    labels.set_label(q.ref, "s1", "ann", 3, "answers it")
    labels.set_label(q.ref, "s1", "bob", 2)
    labels.set_label(q.ref, "s2", "ann", 0)
    labels.set_label(q.ref, "s2", "bob", 3, "key, I think")
    labels.set_final(q.ref, "s2", 1, "chief")
    return store, q, labels, run


def test_qrels_gives_the_adjudicated_or_majority_grade_under_every_id_of_the_text(labelled, capsys):
    store, q, labels, _ = labelled
    assert main(["labels", "export", "--format", "qrels"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # s1: 3 and 2 tie, the lower median (2); s2: adjudicated 1; copy carries s1's text
    assert lines == [f"{q.question_id} 0 copy 2", f"{q.question_id} 0 s1 2", f"{q.question_id} 0 s2 1"]


def test_csv_and_jsonl_keep_every_label_with_notes_and_texts(labelled, tmp_path):
    _, q, _, _ = labelled
    assert main(["labels", "export", "--format", "csv", "--out", str(tmp_path / "l.csv")]) == 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "l.csv").read_text())))
    assert [(r["kind"], r["snippet_id"], r["annotator"], r["grade"]) for r in rows] == [
        ("label", "s1", "ann", "3"),
        ("label", "s1", "bob", "2"),
        ("final", "s2", "chief", "1"),
        ("label", "s2", "ann", "0"),
        ("label", "s2", "bob", "3"),
    ]
    assert rows[0]["note"] == "answers it" and rows[0]["snippet_text"] == "Doc s1. text of s1"
    assert rows[0]["question"] == q.ref.question
    assert main(["labels", "export", "--format", "jsonl", "--out", str(tmp_path / "l.jsonl")]) == 0
    records = [json.loads(line) for line in (tmp_path / "l.jsonl").read_text().splitlines()]
    assert [r["grade_name"] for r in records] == ["key", "relevant", "related", "not relevant", "key"]


def test_an_export_imports_into_a_fresh_store_unchanged(labelled, tmp_path, monkeypatch):
    store, _, labels, _ = labelled
    for fmt in ("csv", "jsonl"):
        text = export(fmt, collect(store.path), labels)
        fresh = LabelStore(tmp_path / f"fresh-{fmt}.sqlite")
        report = import_labels(fresh, [], parse(fmt, text), source="test", importer=Importer("chief", replace=True))
        assert report.total.new == 5 and report.unknown_questions == 5  # no run of it there: kept, counted
        key = ("question_id", "snippet_id", "annotator", "grade", "note")
        assert [tuple(getattr(r, k) for k in key) for r in fresh.labels()] == [
            tuple(getattr(r, k) for k in key) for r in labels.labels()
        ]
        assert [(r.snippet_id, r.grade) for r in fresh.finals()] == [("s2", 1)]


def test_malformed_qrels_lines_are_named_and_nothing_is_written(labelled, tmp_path, capsys):
    _, q, labels, _ = labelled
    before = labels.labels()
    path = tmp_path / "elsewhere.qrels"
    path.write_text(
        f"# judged elsewhere\n{q.question_id} 0 s1 1\n{q.question_id} 0 s2\n\n"
        f"{q.question_id} 0 s2 seven\n{q.question_id} 0 s9 5\n{q.question_id} 0 unseen 2\n"
    )
    assert main(["labels", "import", str(path), "--annotator", "trec"]) == 1
    out = capsys.readouterr().out
    assert f"{path}: line 3: expected 4 fields" in out and f"{path}: line 5: grade 'seven' is not a number" in out
    assert f"{path}: line 6: grade 5 is outside the scale" in out and "Nothing was written" in out
    assert labels.labels() == before
    assert main(["labels", "import", str(path), "--annotator", "trec", "--skip-bad"]) == 0
    out = capsys.readouterr().out
    assert (
        "Imported 2 label(s): 2 added, 0 changed, 0 skipped" in out
        and "trec's labels: 2 added" in out
        and "1 for snippets outside their question's pool" in out
    )
    mine = {r.snippet_id: r.grade for r in labels.labels() if r.annotator == "trec"}
    assert mine == {"s1": 1, "unseen": 2}  # the unseen snippet is kept, ready for a run that shows it


def test_qrels_without_annotator_and_unreadable_files_are_refused(labelled, tmp_path, capsys):
    path = tmp_path / "x.qrels"
    path.write_text("q 0 s 1\n")
    assert main(["labels", "import", str(path)]) == 2
    assert "say whose judgments these are" in capsys.readouterr().err
    assert main(["labels", "import", str(tmp_path / "missing.csv")]) == 2
    assert "cannot read it" in capsys.readouterr().err
    (tmp_path / "bad.csv").write_text("question,grade\nq,1\n")
    assert main(["labels", "import", str(tmp_path / "bad.csv")]) == 1
    assert "line 1: the header lacks the column(s) annotator, question_id, snippet_id" in capsys.readouterr().out


def test_cli_pool_is_blind_add_labels_and_metrics_csv(labelled, tmp_path, capsys):
    store, q, labels, run = labelled
    assert main(["labels", "pool", q.question_id, "--annotator", "cy"]) == 0
    blind = capsys.readouterr().out
    assert "text of s1" in blind and "medrag" not in blind and "ann" not in blind and "score" not in blind
    assert main(["labels", "pool", q.question_id, "--annotator", "cy", "--open"]) == 0
    assert "shown by: medrag #1 teaching" in capsys.readouterr().out
    assert main(["labels", "add", q.question_id, "s2", "2", "--annotator", "cy", "--note", "partly"]) == 0
    assert main(["labels", "add", run.id, "copy", "3", "--annotator", "cy", "--run"]) == 0
    capsys.readouterr()
    RunStore().delete_run(run.id)
    assert main(["labels", "add", run.id, "s1", "1", "--annotator", "cy", "--run"]) == 2
    assert "is not in the store (deleted?)" in capsys.readouterr().err
    assert {r.snippet_id: r.grade for r in labels.labels() if r.annotator == "cy"} == {"s2": 2, "copy": 3}
    assert main(["labels", "history", q.question_id]) == 0
    changes = capsys.readouterr().out.splitlines()
    assert "final s2  chief: - -> 1  (adjudication)" in changes[4] and "cy: - -> 2  (cli)  note: partly" in changes[5]
    save_run(store, "sema", [hit("s2"), hit("s1")])  # labels outlive the deleted run: a new run is scored by them
    assert main(["labels", "metrics", "--csv", str(tmp_path / "m.csv")]) == 0
    out = capsys.readouterr().out
    assert "1 runs scored" in out and "sema" in out
    rows = list(csv.DictReader((tmp_path / "m.csv").open()))
    # s2 was adjudicated 1 (not relevant); s1 is relevant (ann 3, bob 2: the lower of a tie), found second
    assert rows[0]["method"] == "sema" and float(rows[0]["MRR"]) == 0.5
