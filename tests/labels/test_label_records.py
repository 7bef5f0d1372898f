"""Labels read from the database are typed records whose fields are their table's columns."""

from __future__ import annotations

from dataclasses import fields

from core.engine.store.sqlite import connect
from core.studio.labels import FinalLabel, Label, LabelStore, derive_question


def test_labels_and_adjudications_read_as_records_of_their_tables_columns(tmp_path):
    labels = LabelStore(tmp_path / "studio.sqlite")
    ref = derive_question("Which drug?", {"A": "x", "B": "y"})
    labels.set_label(ref, "s1", "ann", 3, "names it")
    labels.set_final(ref, "s1", 2, "chief")
    conn = connect(labels.path)
    try:
        for record, table in ((Label, "labels"), (FinalLabel, "label_finals")):
            columns = [row[1] for row in conn.execute(f"pragma table_info({table})")]
            assert [f.name for f in fields(record)] == columns
        conn.execute("update labels set note = null")  # a note the table allows to be missing reads as none
    finally:
        conn.commit()
        conn.close()
    [label], [final] = labels.labels(), labels.finals()
    assert (label.question_id, label.snippet_id, label.by, label.grade, label.note) == (
        ref.question_id,
        "s1",
        "ann",
        3,
        "",
    )
    assert (final.by, final.grade, final.note, final.updated > 0) == ("chief", 2, "", True)
