"""The shared-room load benchmark's check: a grade an annotator's page showed as saved counts as lost unless the
database holds it (the last grade given to each passage)."""

from __future__ import annotations

from benchmarks.shared_room_load import lost_labels
from core.engine.store import RunStore
from core.studio.labels import LabelStore, collect
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


def test_the_page_says_what_failed_by_kind():
    from benchmarks.shared_room_load import _kind, markdown

    errors = ["participant 3 never saw step 9", "participant 4: ConnectionClosedError: 1011", "Annotator A: Timeout"]
    assert [_kind(e) for e in errors] == [
        "a step never seen",
        "a participant's connection or page",
        "an annotator's page",
    ]
    spread = {"n": 10, "p50": 1.0, "p95": 2.0, "max": 2.5}
    data = {
        "participants": 2,
        "steps": 5,
        "dwell_s": 3.0,
        "annotators": 2,
        "machine": {"cores": 2, "cpu": "x86_64"},
        "when": "today",
        "command": "python -m benchmarks.shared_room_load",
        "step_to_screen_s": {**spread, "expected": 10},
        "label_saves": 4,
        "label_saves_lost": 1,
        "label_saved_s": spread,
        "errors": 3,
        "errors_by_kind": {_kind(e): 1 for e in errors},
        "first_errors": errors,
        "owner_runs_finished": 1,
        "owner_run_seconds": [20.0],
        "cpu_percent_of_one_core": {k: {"mean": 1, "p95": 2} for k in ("server", "benchmark", "others")},
    }
    page = markdown(data)
    assert "| label saves lost | 1 of 4 the pages said they saved | 0 |" in page
    assert (
        "| errors | 3; a step never seen: 1; a participant's connection or page: 1; an annotator's page: 1 | 0 |"
        in page
    )
    assert "- participant 3 never saw step 9" in page


def run_figures(options: str, when: str, server_ms: float, without_model_ms: float) -> dict:
    """A results file's figures, as far as the before-and-after tables read them."""
    return {
        "command": f"python -m benchmarks.shared_room_load {options}",
        "participants": 60,
        "steps": 20,
        "when": when,
        "step_to_screen_s": {"n": 300, "p50": 1.2, "p95": 2.0, "max": 2.5},
        "label_saves": 50,
        "label_saves_lost": 0,
        "errors": 0,
        "cpu_percent_of_one_core": {"others": {"mean": 40, "p95": 80}},
        "cpu_ms_per_participant_step": {"server": server_ms, "without_model": without_model_ms},
    }


def test_the_page_compares_the_same_command_before_and_after(tmp_path, monkeypatch):
    import json

    import benchmarks.shared_room_load as bench

    before = run_figures("--participants 30", "then", 44.4, 22.8)
    after = run_figures("--participants 30", "now", 30.0, 10.0)
    monkeypatch.setattr(bench, "BEFORE", tmp_path / "before.json")
    assert bench.comparison(after) == ""  # nothing recorded before
    bench.BEFORE.write_text(json.dumps(before))
    table = bench.comparison(after)
    assert (
        "| the server's CPU per participant-step, without the embedded model's threads | 22.8 ms | 10.0 ms |" in table
    )
    assert bench.comparison({**after, "command": "another command"}) == ""  # only the same command compares


def test_the_page_adds_the_one_core_runs_where_both_were_recorded(tmp_path, monkeypatch):
    import json

    import benchmarks.shared_room_load as bench

    after = run_figures("--participants 60 --steps 20", "now", 21.1, 8.2)
    after["machine"] = {"cpu": "x86_64", "cores": 2, "usable": 1}
    before = run_figures("--participants 60 --steps 20", "then", 23.9, 15.1)
    monkeypatch.setattr(bench, "ONE_CORE", tmp_path / "one.json")
    monkeypatch.setattr(bench, "ONE_CORE_BEFORE", tmp_path / "one_before.json")
    assert bench.one_core() == ""  # neither recorded
    bench.ONE_CORE.write_text(json.dumps(after))
    assert bench.one_core() == ""  # no run before to compare with
    bench.ONE_CORE_BEFORE.write_text(json.dumps(before))
    text = bench.one_core()
    assert "60 participants, 20 steps, everything on 1 of the 2 cores (`taskset -c 0`)" in text
    assert "| the server's CPU per participant-step, without the embedded model's threads | 15.1 ms | 8.2 ms |" in text
