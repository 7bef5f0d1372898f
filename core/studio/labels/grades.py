"""The TREC grading scale the studio judges snippets on, and what counts as relevant."""

from __future__ import annotations

GRADES: dict[int, str] = {0: "not relevant", 1: "related", 2: "relevant", 3: "key"}
RELEVANT = 2  # default threshold: a snippet graded 2 (relevant) or 3 (key) counts as relevant in P@k and MRR


class LabelError(ValueError):
    """A label, annotator or file that cannot be used; the message says what and where."""


def check_grade(grade: object, where: str = "") -> int:
    """The grade as an int in 0..3, or a LabelError naming ``where``."""
    prefix = f"{where}: " if where else ""
    try:
        value = int(str(grade).strip())
    except ValueError:
        raise LabelError(f"{prefix}grade {grade!r} is not a number; use 0, 1, 2 or 3") from None
    if value not in GRADES:
        raise LabelError(f"{prefix}grade {value} is outside the scale 0 (not relevant) to 3 (key)")
    return value


def check_annotator(name: object) -> str:
    text = " ".join(str(name or "").split())
    if not text:
        raise LabelError("The annotator name is empty: type your name first (it is stored with every label).")
    if len(text) > 80:
        raise LabelError("The annotator name is longer than 80 characters; use a shorter name or your initials.")
    return text
