"""Retrieval metrics from the labels: for every run, P@k, nDCG@k and MRR over the ranked list it retrieved
(``ir-measures`` over trec_eval's implementation), and the share of the list that is judged; averaged per method
with 95% intervals, and methods compared on the questions both ran.

Unjudged snippets count as not relevant, as in TREC. P@k divides by k even when a list is shorter. nDCG's gains
are the grades (0-3); P@k and MRR count a snippet as relevant from grade ``relevant`` (default 2) up.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import ir_measures
import numpy as np
from scipy import stats

from core.studio.labels.grades import RELEVANT
from core.studio.labels.pool import PoolQuestion, consensus, ranked_list, resolve
from core.studio.labels.records import FinalLabel, Label


@dataclass(frozen=True)
class MetricSettings:
    k: int = 5
    ndcg_k: int = 10
    relevant: int = RELEVANT
    generated: bool = False  # also score the documents a method generated, after the ones it retrieved
    annotator: str | None = None  # one annotator's labels; None = adjudicated label, else the majority

    def names(self) -> dict[str, str]:
        """Column name -> ir-measures measure."""
        return {
            f"P@{self.k}": f"P(rel={self.relevant})@{self.k}",
            f"nDCG@{self.ndcg_k}": f"nDCG@{self.ndcg_k}",
            "MRR": f"RR(rel={self.relevant})",
            f"judged@{self.ndcg_k}": f"Judged@{self.ndcg_k}",
        }


def qrels_of(
    question: PoolQuestion,
    label_rows: list[Label],
    final_rows: list[FinalLabel],
    annotator: str | None = None,
) -> dict[str, int]:
    """pool id -> the grade metrics use: one annotator's, or the adjudicated one, or the majority."""
    labels, _ = resolve(question, label_rows)
    finals, _ = resolve(question, final_rows)
    grades = {}
    for pool_id in {*labels, *finals}:
        given = labels.get(pool_id, {})
        if annotator is not None:
            if annotator in given:
                grades[pool_id] = given[annotator].grade
            continue
        final = finals.get(pool_id, {}).get("final")
        grade = consensus([row.grade for row in given.values()], final.grade if final else None)
        if grade is not None:
            grades[pool_id] = grade
    return grades


def run_metrics(
    questions: list[PoolQuestion],
    label_rows: list[Label],
    final_rows: list[FinalLabel],
    settings: MetricSettings = MetricSettings(),
) -> list[dict[str, Any]]:
    """One row per run whose question has at least one judged snippet and whose list is not empty."""
    names = settings.names()
    measures = {ir_measures.parse_measure(m): column for column, m in names.items()}
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, float]] = {}
    rows: dict[str, dict[str, Any]] = {}
    for question in questions:
        grades = qrels_of(question, label_rows, final_rows, settings.annotator)
        if not grades:
            continue
        for ranking in question.runs:
            ranked = ranked_list(ranking, settings.generated)
            if not ranked:
                continue
            qrels[ranking.run_id] = grades  # each run is its own query: runs of one question never mix
            runs[ranking.run_id] = {pool_id: float(len(ranked) - i) for i, pool_id in enumerate(ranked)}
            rows[ranking.run_id] = {
                "run_id": ranking.run_id,
                "method": ranking.method,
                "question_id": question.question_id,
                "started": ranking.started,
                "list_length": len(ranked),
                "judged_share": sum(p in grades for p in ranked) / len(ranked),
            }
    for metric in ir_measures.iter_calc(list(measures), qrels, runs) if runs else []:
        rows[metric.query_id][measures[metric.measure]] = float(metric.value)
    return sorted(rows.values(), key=lambda r: (r["method"], r["question_id"], r["started"]))


def _per_question(rows: list[dict[str, Any]], measure: str) -> dict[str, dict[str, float]]:
    """method -> question -> the measure averaged over that method's runs of the question."""
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        if measure in row:
            values[row["method"]][row["question_id"]].append(row[measure])
    return {m: {q: float(np.mean(v)) for q, v in qs.items()} for m, qs in values.items()}


def _interval(
    values: list[float], bounds: tuple[float, float] | None = (0.0, 1.0)
) -> tuple[float | None, float | None]:
    """95% t-interval of the mean (None below two values)."""
    if len(values) < 2:
        return None, None
    mean, sem = float(np.mean(values)), float(stats.sem(values))
    if sem == 0:
        return mean, mean
    low, high = stats.t.interval(0.95, len(values) - 1, loc=mean, scale=sem)
    if bounds:
        low, high = max(bounds[0], low), min(bounds[1], high)
    return float(low), float(high)


def summarize(rows: list[dict[str, Any]], measures: list[str]) -> list[dict[str, Any]]:
    """Per method and measure: mean over questions (each question weighs the same), 95% interval, n questions."""
    found = []
    for measure in measures:
        for method, by_question in sorted(_per_question(rows, measure).items()):
            values = list(by_question.values())
            low, high = _interval(values)
            found.append(
                {
                    "method": method,
                    "measure": measure,
                    "mean": float(np.mean(values)),
                    "low": low,
                    "high": high,
                    "n_questions": len(values),
                    "n_runs": sum(1 for r in rows if r["method"] == method and measure in r),
                }
            )
    return found


def compare_methods(rows: list[dict[str, Any]], measure: str) -> list[dict[str, Any]]:
    """Every pair of methods on the questions both ran: mean paired difference with its 95% interval, and whether
    the data separate them (the interval excludes 0)."""
    per = _per_question(rows, measure)
    found = []
    for a, b in combinations(sorted(per), 2):
        shared = sorted(set(per[a]) & set(per[b]))
        diffs = [per[a][q] - per[b][q] for q in shared]
        low, high = _interval(diffs, bounds=None)
        separated = low is not None and (low > 0 or high < 0)
        verdict = (
            f"{a} higher"
            if separated and low > 0
            else f"{b} higher"
            if separated
            else "cannot separate"
            if shared
            else "no shared question"
        )
        found.append(
            {
                "first": a,
                "second": b,
                "measure": measure,
                "n_questions": len(shared),
                "mean_difference": float(np.mean(diffs)) if diffs else None,
                "low": low,
                "high": high,
                "verdict": verdict,
            }
        )
    return found


def questions_by_method(rows: list[dict[str, Any]]) -> dict[str, set[str]]:
    """method -> the questions it has scored runs on; methods whose sets differ are averaged over different
    questions, so their means are not comparable as they stand."""
    found: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        found[row["method"]].add(row["question_id"])
    return dict(found)


def shared_only(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of the questions every method has runs on."""
    sets = list(questions_by_method(rows).values())
    shared = set.intersection(*sets) if sets else set()
    return [r for r in rows if r["question_id"] in shared]


def to_csv(rows: list[dict[str, Any]]) -> str:
    columns = list(dict.fromkeys(k for row in rows for k in row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()
