"""Labels gathered for review: who gave which grade to each pooled snippet, and the disagreements side by side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.labels.agreement import Judged, disagreements
from core.labels.grades import RELEVANT
from core.labels.pool import PoolItem, PoolQuestion, resolve


def judged_items(questions: list[PoolQuestion], label_rows: list[dict[str, Any]]) -> Judged:
    """(question id, pool id) -> annotator -> grade, for every pooled snippet with at least one label."""
    judged: Judged = {}
    for question in questions:
        labels, _ = resolve(question, label_rows)
        for pool_id, given in labels.items():
            judged[(question.question_id, pool_id)] = {who: row["grade"] for who, row in given.items()}
    return judged


@dataclass(frozen=True)
class Conflict:
    """A disagreement with what an adjudicator needs: the question, the text, both labels and notes, the final."""

    question: PoolQuestion
    item: PoolItem
    first: dict[str, Any]
    second: dict[str, Any]
    split: bool
    final: dict[str, Any] | None


def conflicts(questions: list[PoolQuestion], label_rows: list[dict[str, Any]], final_rows: list[dict[str, Any]],
              relevant: int = RELEVANT) -> list[Conflict]:
    by_id = {q.question_id: q for q in questions}
    labels = {q.question_id: resolve(q, label_rows)[0] for q in questions}
    finals = {q.question_id: resolve(q, final_rows)[0] for q in questions}
    found = []
    for d in disagreements(judged_items(questions, label_rows), relevant):
        qid, pool_id = d.item
        given = labels[qid][pool_id]
        found.append(Conflict(by_id[qid], by_id[qid].item(pool_id), given[d.first], given[d.second], d.split,
                              finals[qid].get(pool_id, {}).get("final")))
    return found
