"""The statistics against reference values worked by hand, and how errors enter them (as not correct, counted)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.studio.eval.report import format_pairs, pairwise, summarize
from core.studio.eval.stats import mcnemar, overall_reading, pairs, pareto_front, wilson
from tests.fakes import item_result


@pytest.mark.parametrize(
    "correct, n, low, high",
    [
        (5, 10, 0.2366, 0.7634),  # (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n), z = 1.96
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (19, 50, 0.2586, 0.5185),
    ],
)
def test_wilson_intervals(correct, n, low, high):
    assert wilson(correct, n) == pytest.approx((low, high), abs=1e-4)
    assert wilson(0, 0) is None


def test_exact_mcnemar():
    # b=10, c=2: two-sided binomial on 12 discordant pairs = 2 * (C(12,0)+C(12,1)+C(12,2)) / 2^12 = 158/4096
    first = [True] * 10 + [False] * 2 + [True] * 5 + [False] * 3
    second = [False] * 10 + [True] * 2 + [True] * 5 + [False] * 3
    assert mcnemar(first, second) == (10, 2, pytest.approx(158 / 4096))
    assert mcnemar([True, False], [True, False]) == (0, 0, 1.0)  # never differ: nothing to test


def _row(arm, qid, predicted, gold="A", status="ok", dataset="medqa"):
    answer = {"gold": gold, "predicted": predicted, "correct": int(status == "ok" and predicted == gold)}
    error = "" if status == "ok" else "LLMError"
    return item_result(
        arm=arm, method=arm, dataset=dataset, qid=qid, asked=f"k{qid}", status=status, error_type=error, **answer
    )


def test_pairs_use_only_shared_questions_and_count_errors_as_not_correct():
    rows = [
        _row("x", "1", "A"),
        _row("x", "2", "A"),
        _row("x", "3", None, status="error"),
        _row("x", "4", "B"),
        _row("y", "1", "A"),
        _row("y", "2", "B"),
        _row("y", "3", "A"),
        _row("y", "5", "A"),
    ]
    (pair,) = pairs(rows)
    assert (pair.first, pair.second, pair.n, pair.b, pair.c) == ("x", "y", 3, 1, 1)  # question 4 and 5 not shared
    assert pair.agreement == pytest.approx(1 / 3) and pair.same_answer == pytest.approx(1 / 3)
    assert pair.reading() == (
        "x and y are not distinguishable on these 3 questions (McNemar p = 1.00; 1 vs 1 discordant)"
    )
    line = {s["arm"]: s for s in summarize(rows)}["x"]
    assert (line["correct"], line["n"], line["errors"]) == (2, 4, 1)  # the error is in n, not in correct


def test_a_clear_difference_is_read_as_one():
    rows = [_row("good", str(i), "A") for i in range(12)] + [_row("bad", str(i), "B") for i in range(12)]
    (pair,) = pairs(rows)
    assert pair.p < 0.001 and pair.reading().startswith("good is more accurate than bad on these 12 questions")
    assert overall_reading([pair]) == pair.reading()
    other = pairs([replace(r, arm="bad2") for r in rows if r.arm == "bad"] + rows)
    assert overall_reading(other).startswith(
        "2 of 3 pairs differ at p < 0.05 on these 12 questions: good over bad2 "
        "(p = 0.000); good over bad (p = 0.000). The others are not"
    )


def test_pairwise_table_per_dataset_and_its_reading():
    rows = [_row(a, str(i), "A", dataset=d) for a in ("x", "y", "z") for d in ("medqa", "mmlu") for i in range(3)]
    tests = pairwise(rows)
    assert list(tests) == ["all", "medqa", "mmlu"] and [p.n for p in tests["all"]] == [6, 6, 6]
    text = format_pairs(tests["all"], label=str.upper)
    assert text.splitlines()[2].split() == ["X", "Y", "6", "0", "0", "1.000", "100%", "100%"]
    assert text.splitlines()[-1] == (
        "No pair is distinguishable on these 6 questions (paired exact McNemar, "
        "p ≥ 0.05 for all 3 pairs): the data do not rank them."
    )


def test_pareto_front():
    points = {"cheap": (1.0, 0.40), "dear": (9.0, 0.60), "worse": (5.0, 0.40), "mid": (4.0, 0.55), "tie": (4.0, 0.55)}
    assert pareto_front(points) == {"cheap", "dear", "mid", "tie"}
