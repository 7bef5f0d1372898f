"""Relevance labels: pooled, graded judging of what every method retrieved or generated for a question, agreement
between annotators, and retrieval metrics computed from the labels. qrels is the interchange format."""

from core.studio.labels.grades import GRADES, RELEVANT, LabelError, check_annotator, check_grade
from core.studio.labels.identity import QuestionRef, derive_question
from core.studio.labels.pool import PoolItem, PoolQuestion, RunFilter, collect, consensus, ranked_list, resolve
from core.studio.labels.records import FinalLabel, Label
from core.studio.labels.store import LabelRow, LabelStore, LabelStoreBusy, Written

__all__ = [
    "GRADES",
    "RELEVANT",
    "FinalLabel",
    "Label",
    "LabelError",
    "LabelRow",
    "LabelStore",
    "LabelStoreBusy",
    "PoolItem",
    "PoolQuestion",
    "QuestionRef",
    "RunFilter",
    "Written",
    "check_annotator",
    "check_grade",
    "collect",
    "consensus",
    "derive_question",
    "ranked_list",
    "resolve",
]
