"""How far judging has come: per annotator and per queue, and which snippets still need annotators, so that each
annotator is handed first the snippets others have begun.

The queue follows Argilla's task distribution: a record is complete once it has the dataset's minimum number of
submitted responses (the "minimum submitted responses" of its distribution settings, 1 by default; see
https://huggingface.co/learn/llm-course/chapter10/4), and complete records leave the annotators' queues. Here a
snippet is done once ``target`` annotators have judged it, and snippets on their way there come before new ones:
annotators who judge only a few each still meet on the same snippets, which agreement needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from core.studio.labels.pool import PoolItem, PoolQuestion, resolve
from core.studio.labels.records import Label

TARGET_ANNOTATORS = 2


def queue_order(
    question: PoolQuestion,
    given: Mapping[str, Mapping[str, Label]],
    annotator: str,
    target: int = TARGET_ANNOTATORS,
) -> list[PoolItem]:
    """The order ``annotator`` is handed ``question``'s snippets (``given``: pool id -> annotator -> label, as
    ``resolve`` returns). First the snippets others have judged that still need judges, those nearest the target
    first; then those nobody has judged; last those already done. Only others' labels place a snippet, so a grade
    never moves a snippet under the one who gave it. Within each tier the order is the annotator's own shuffle
    (``blind_order``): it says nothing of which method showed a snippet, at what rank, or how others graded it."""

    def tier(item: PoolItem) -> tuple[int, int]:
        others = sum(who != annotator for who in given.get(item.pool_id, {}))
        if 0 < others < target:
            return 0, -others
        return (1, 0) if others == 0 else (2, 0)

    return sorted(question.blind_order(annotator), key=tier)  # a stable sort: the shuffle holds within a tier


def waiting_on_others(
    question: PoolQuestion, given: Mapping[str, Mapping[str, Label]], annotator: str, target: int
) -> int:
    """Snippets of ``question`` that others have begun, that still need judges and that ``annotator`` has not judged:
    the queue sends annotators to such questions first."""
    return sum(
        annotator not in who and 0 < len(who) < target
        for who in (given.get(item.pool_id, {}) for item in question.items)
    )


@dataclass(frozen=True)
class Progress:
    judged: int  # pool items this annotator judged
    pool: int  # pool items in the queue
    questions_done: int  # questions whose whole pool this annotator judged
    questions: int
    at_target: int  # pool items judged by at least ``target`` annotators
    target: int

    def describe(self) -> str:
        return (
            f"{self.judged}/{self.pool} snippets judged, {self.questions_done}/{self.questions} questions done; "
            f"{self.at_target}/{self.pool} snippets have {self.target}+ annotators"
        )


def progress(
    questions: list[PoolQuestion], label_rows: list[Label], annotator: str, target: int = TARGET_ANNOTATORS
) -> Progress:
    judged = pool = done = at_target = 0
    for question in questions:
        labels, _ = resolve(question, label_rows)
        mine = sum(annotator in labels.get(item.pool_id, {}) for item in question.items)
        judged += mine
        pool += len(question.items)
        done += bool(question.items) and mine == len(question.items)
        at_target += sum(len(labels.get(item.pool_id, {})) >= target for item in question.items)
    return Progress(judged, pool, done, len(questions), at_target, target)
