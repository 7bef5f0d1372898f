"""How far judging has come: per annotator and per queue, and which snippets still need annotators."""

from __future__ import annotations

from dataclasses import dataclass

from core.studio.labels.pool import PoolQuestion, resolve
from core.studio.labels.records import Label

TARGET_ANNOTATORS = 2


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
