"""A benchmark result is a typed record whose fields are the ``eval_items`` columns, in the table's order."""

from __future__ import annotations

import csv
from dataclasses import fields

from core.engine.store import RunStore
from core.studio.eval.report import summarize, write_results
from core.studio.eval.results import ItemResult
from tests.fakes import item_result


def test_the_record_holds_the_table_columns_in_order_and_reads_a_stored_row(tmp_path):
    store = RunStore(tmp_path / "studio.sqlite")
    columns = [c.name for c in store.db["eval_items"].columns]
    assert [f.name for f in fields(ItemResult)] == [*columns, "arm"]
    row = item_result(arm="cot", predicted=None, correct=0, status="error", error_type="LLMError")
    store.db["eval_items"].insert(row.stored())
    [stored] = store.db["eval_items"].rows
    assert ItemResult.from_row(stored) == item_result(predicted=None, correct=0, status="error", error_type="LLMError")


def test_the_items_file_keeps_its_columns_the_table_s_then_the_arm(tmp_path):
    rows = [item_result(arm="cot"), item_result(arm="cot", qid="q2", asked="q2", predicted="B", correct=0)]
    write_results(tmp_path, rows, summarize(rows), {})
    with (tmp_path / "items.csv").open(encoding="utf-8") as f:
        header, *lines = list(csv.reader(f))
    assert header == [f.name for f in fields(ItemResult)]
    assert [line[header.index("predicted")] for line in lines] == ["A", "B"] and lines[0][-1] == "cot"
