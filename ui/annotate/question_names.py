"""A pooled question as people know it: its teaching case's title, or its benchmark, then its own words; never the
hash that keys its labels."""

from __future__ import annotations

from core.studio.labels.identity import QuestionRef
from ui.common.text import short
from ui.runs.question_form import teaching_cases


def question_source(ref: QuestionRef) -> str:
    """'Case “Acute inferior STEMI”', a benchmark's dataset ('medqa'), or '' for a question typed on a page."""
    kind, _, name = ref.question_id.partition("/")
    if kind == "teaching":
        case = next((c for c in teaching_cases() if c.id == name), None)
        return f"Case “{case.title if case else name}”"
    return "" if kind == "q" else kind


def question_name(ref: QuestionRef, chars: int = 90) -> str:
    """e.g. 'Case “Acute inferior STEMI” · A 58-year-old …', 'medqa · A 23-year-old …', or the text alone."""
    source = question_source(ref)
    return f"{source} · {short(ref.question, chars)}" if source else short(ref.question, chars)
