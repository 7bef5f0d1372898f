"""The results' choice boxes follow the results while a benchmark runs: a dataset that gains answers brings the
pooled "all" choice, and the box shows it instead of the one it was first drawn with."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _results() -> None:
    import streamlit as st

    from tests.fakes import item_result
    from ui.benchmark.results import results

    datasets = st.session_state.get("datasets", ["medqa"])
    rows = [
        item_result(config=config, arm=config, dataset=dataset, qid=f"{dataset}-{i}", run_id=f"{config}-{dataset}-{i}")
        for config in ("cot-0", "medrag-0")
        for dataset in datasets
        for i in range(3)
    ]
    results(rows, [], str)


def _box(at: AppTest, label: str):
    return next(box for box in at.selectbox if box.label == label)


def test_the_dataset_and_pairs_boxes_move_to_all_when_a_second_dataset_answers():
    at = AppTest.from_function(_results, default_timeout=30).run()
    assert not at.exception
    assert _box(at, "Dataset").value == "medqa"  # one dataset: it is the only choice
    at.session_state["datasets"] = ["medqa", "pubmedqa"]  # the running benchmark reaches a second dataset
    at.run()
    assert not at.exception
    assert _box(at, "Dataset").options == ["medqa", "pubmedqa", "all"]
    assert _box(at, "Dataset").value == "all"
    assert _box(at, "Questions").value == "all"
