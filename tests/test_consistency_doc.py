"""docs/consistency.md is what the recorded answers, the readings and today's check give, and the cases the check
exists for are flagged."""

from __future__ import annotations

import json

from benchmarks.consistency_check import BENCH, PAGE, READINGS, RUNS, gather, read_bench, render
from core.studio.consistency import check_answer


def test_the_page_is_generated_from_the_data(shared_data):
    assert PAGE.read_text(encoding="utf-8") == render(shared_data / "mirage" / BENCH.name), (
        "docs/consistency.md is out of date: run python -m benchmarks.consistency_check"
    )


def test_the_dka_case_and_the_packs_contradictions_are_flagged_and_each_flag_was_read():
    runs = json.loads(RUNS.read_text(encoding="utf-8"))
    readings = json.loads(READINGS.read_text(encoding="utf-8"))
    reads = {r.key: r for r in gather(runs, read_bench(BENCH))}
    flagged = {k for k, r in reads.items() if check_answer(r.answer, r.options, r.question)}
    assert {"live/dka/answer first", "pack/stemi/imedrag", "pack/meningitis/medrgag", "pack/malaria/medrag"} <= flagged
    assert "live/dka/reasoning first" not in flagged  # the same case argued and answered alike
    assert all(readings.get(k, {}).get("contradiction") for k in flagged), "a flag the reader disagrees with"
