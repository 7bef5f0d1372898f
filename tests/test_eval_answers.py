"""Which options an arm chooses against which are right: a lean to one option is found and tested, a balanced
arm is not flagged, errors choose nothing, datasets stay apart, and the files and the command line carry it."""

from __future__ import annotations

import json

from scipy.stats import chi2

from core.studio.eval.answers import answer_shares, format_answers, stuart_maxwell
from core.studio.eval.report import summarize, write_results
from core.studio.eval.results import ItemResult
from tests.fakes import item_result


def row(arm: str, dataset: str, qid: str, gold: str, predicted: str, status: str = "ok") -> ItemResult:
    error = "" if status == "ok" else "LLMError"
    answer = {"gold": gold, "predicted": predicted, "correct": int(gold == predicted)}
    return item_result(
        arm=arm, method=arm, dataset=dataset, qid=qid, asked=qid, status=status, error_type=error, **answer
    )


# Ten yes/no questions, five "yes": one reader says yes to all of them, the other answers as the gold does
# except on one pair it swaps.
GOLD = ["A", "B"] * 5
RAG = [row("rag", "bioasq", f"q{i}", g, "A") for i, g in enumerate(GOLD)]
COT = [row("cot", "bioasq", f"q{i}", g, {0: "B", 1: "A"}.get(i, g)) for i, g in enumerate(GOLD)]


def test_an_arm_that_says_yes_to_everything_leans_to_yes():
    (rag,) = answer_shares(RAG)
    assert (rag.answered, rag.unanswered, rag.gold, rag.chosen) == (10, 0, {"A": 5, "B": 5}, {"A": 10})
    assert rag.leaning == "A" and rag.leans and rag.p < 0.05
    assert rag.reading() == (
        "rag on bioasq leans to A: chose A 10 times in 10, right 5 times (Stuart–Maxwell p = 0.025)"
    )


def test_two_options_the_test_is_mcnemars():
    # Gold A answered B 2 times, gold B answered A 7 times: uncorrected McNemar, (b - c)^2 / (b + c) on 1 df.
    pairs = [("A", "A")] * 3 + [("A", "B")] * 2 + [("B", "A")] * 7 + [("B", "B")] * 3
    assert abs(stuart_maxwell(pairs) - chi2.sf((7 - 2) ** 2 / 9, 1)) < 1e-12


def test_an_arm_choosing_as_often_as_right_is_not_flagged():
    (cot,) = answer_shares(COT)
    assert cot.chosen == cot.gold == {"A": 5, "B": 5} and cot.p == 1.0 and not cot.leans and cot.leaning is None
    assert cot.reading() == "cot on bioasq: chose each option as often as it was right (10 questions)"


def test_a_small_lean_is_named_but_not_claimed():
    rows = [
        row("x", "medqa", f"q{i}", g, p)
        for i, (g, p) in enumerate([("A", "A"), ("B", "A"), ("C", "C"), ("D", "D"), ("B", "B"), ("C", "A"), ("D", "B")])
    ]
    (x,) = answer_shares(rows)
    assert x.leaning == "A" and not x.leans
    assert x.reading().startswith("x on medqa: chose A 3 times in 7, right once; a lean the data cannot show")


def test_errors_choose_nothing_and_datasets_stay_apart():
    rows = [*RAG, row("rag", "pubmedqa", "p1", "B", "", status="error"), row("rag", "pubmedqa", "p2", "C", "C")]
    bio, pub = answer_shares(rows)
    assert (bio.dataset, pub.dataset) == ("bioasq", "pubmedqa")
    assert (pub.answered, pub.unanswered, pub.gold, pub.chosen, pub.p) == (1, 1, {"C": 1}, {"C": 1}, None)
    assert pub.reading() == "rag on pubmedqa: chose each option as often as it was right (1 question)"


def test_the_summary_file_and_the_printed_table_carry_it(tmp_path):
    rows = RAG + COT
    write_results(tmp_path, rows, summarize(rows), {})
    saved = json.loads((tmp_path / "summary.json").read_text())["answers"]
    assert [(a["arm"], a["leaning"], a["leans"], a["chosen"]) for a in saved] == [
        ("rag", "A", True, {"A": 10}),
        ("cot", None, False, {"A": 5, "B": 5}),
    ]
    printed = format_answers(answer_shares(rows))
    assert printed.splitlines() == [
        "rag  bioasq: A 10/5  B 0/5  (p = 0.025)",
        "cot  bioasq: A 5/5  B 5/5  (p = 1.000)",
        "rag on bioasq leans to A: chose A 10 times in 10, right 5 times (Stuart–Maxwell p = 0.025)",
    ]
    assert format_answers(answer_shares(COT)).endswith("more than the data can separate from chance")
