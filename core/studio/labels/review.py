"""Labels gathered for review: who gave which grade to each pooled snippet, and the disagreements side by side."""

from __future__ import annotations

from dataclasses import dataclass

from core.studio.labels.agreement import Judged, disagreements
from core.studio.labels.grades import RELEVANT
from core.studio.labels.pool import PoolItem, PoolQuestion, resolve
from core.studio.labels.records import FinalLabel, Label


def judged_items(questions: list[PoolQuestion], label_rows: list[Label]) -> Judged:
    """(question id, pool id) -> annotator -> grade, for every pooled snippet with at least one label."""
    judged: Judged = {}
    for question in questions:
        labels, _ = resolve(question, label_rows)
        for pool_id, given in labels.items():
            judged[(question.question_id, pool_id)] = {who: row.grade for who, row in given.items()}
    return judged


@dataclass(frozen=True)
class Conflict:
    """A snippet the annotators disagree on, with what an adjudicator needs: the question, the text, every
    annotator's label and note (by name), how far apart the grades are, and the final label if one was given.

    One per snippet however many pairs disagree on it, so three annotators who all differ make one row, not three."""

    question: PoolQuestion
    item: PoolItem
    given: list[Label]  # every annotator's label, by name
    gap: int  # the widest gap between two of the grades
    split: bool  # some called it relevant and some did not
    final: FinalLabel | None


def conflicts(
    questions: list[PoolQuestion],
    label_rows: list[Label],
    final_rows: list[FinalLabel],
    relevant: int = RELEVANT,
) -> list[Conflict]:
    """The disagreements (``agreement.disagreements``) gathered by snippet, widest gap first."""
    by_id = {q.question_id: q for q in questions}
    labels = {q.question_id: resolve(q, label_rows)[0] for q in questions}
    finals = {q.question_id: resolve(q, final_rows)[0] for q in questions}
    pairs: dict[tuple[str, str], list] = {}
    for d in disagreements(judged_items(questions, label_rows), relevant):
        pairs.setdefault(d.item, []).append(d)
    found = []
    for (qid, pool_id), found_pairs in pairs.items():
        given = labels[qid][pool_id]
        found.append(
            Conflict(
                by_id[qid],
                by_id[qid].item(pool_id),
                [given[who] for who in sorted(given)],
                max(d.gap for d in found_pairs),
                any(d.split for d in found_pairs),
                finals[qid].get(pool_id, {}).get("final"),
            )
        )
    return sorted(found, key=lambda c: -c.gap)
