"""docs/retrieval-at-scale.md shows what the benchmarks measured: its tables are the ones tools/qdrant_docs.py
draws from benchmarks/results/qdrant_*.json and gpu_embed.json (``python -m tools.docs`` writes and checks them)."""

from __future__ import annotations

import re

from tools import docs, qdrant_docs


def test_the_page_tables_are_the_results(capsys):
    assert docs.main(["--check"]) == 0, capsys.readouterr().err


def test_every_table_the_page_names_is_written():
    page = qdrant_docs.PAGE.read_text(encoding="utf-8")
    made = qdrant_docs.tables()
    named = set(re.findall(r"<!-- table:(\w+) -->", page))
    assert named == set(made) and all(made[name].startswith("|") for name in named)
