"""Labels as the studio's SQLite file holds them: an annotator's grade on a snippet (``labels``) and the adjudicated
grade that settles a snippet (``label_finals``), each read with ``from_row``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Label:
    """An annotator's current grade on a snippet of a question."""

    question_id: str
    snippet_id: str
    annotator: str
    grade: int  # on the TREC scale (``grades.GRADES``)
    note: str
    updated: float  # when it was last changed (epoch seconds)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Label:
        return cls(
            row["question_id"], row["snippet_id"], row["annotator"], row["grade"], row["note"] or "", row["updated"]
        )

    @property
    def by(self) -> str:
        """Who gave it."""
        return self.annotator


@dataclass(frozen=True)
class FinalLabel:
    """The adjudicated grade of a snippet of a question: one per snippet, over every annotator's."""

    question_id: str
    snippet_id: str
    grade: int
    note: str
    adjudicator: str
    updated: float

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> FinalLabel:
        return cls(
            row["question_id"], row["snippet_id"], row["grade"], row["note"] or "", row["adjudicator"], row["updated"]
        )

    @property
    def by(self) -> str:
        """Who gave it."""
        return self.adjudicator
