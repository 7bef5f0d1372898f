"""The shared-room load benchmark's check: a grade an annotator's page showed as saved counts as lost unless the
database holds it (the last grade given to each passage)."""

from __future__ import annotations

from benchmarks.shared_room_load import lost_labels
from core.labels import LabelStore, collect
from core.store import RunStore
from tests.labels.helpers import hit, save_run


def test_a_grade_the_page_acknowledged_is_lost_unless_the_database_holds_the_last_one():
    store = RunStore()
    save_run(store, "medrag", [hit("s1"), hit("s2")])
    [question] = collect(store.path)
    texts = {item.ids[0]: item.blind_text() for item in question.items}
    LabelStore(store.path).set_label(question.ref, "s1", "Annotator A", 2)
    saves = [("Annotator A", texts["s1"], 3, 1.0), ("Annotator A", texts["s1"], 2, 2.0)]  # changed, then saved
    assert lost_labels(store.path, saves) == (2, 0)
    saves.append(("Annotator B", f"  {texts['s2']} ", 1, 3.0))  # acknowledged, never written
    assert lost_labels(store.path, saves) == (3, 1)
