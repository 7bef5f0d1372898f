"""Where a text stopped because the reply format allowed no more: the character bounds a method's compact lengths
put on its text fields (the server's grammar stops a field there, mid-word if it must), and whether a text ends at
one of them mid-sentence. A screen uses it to say that a text was cut and that the model wrote no more of it."""

from __future__ import annotations

import dataclasses
import sys
from functools import cache

from core.engine.methods import registry

ENDINGS = (".", "!", "?", '"', ")", "]", ":", ";")  # a text that ends on one of these ended where its writer chose
SLACK = 0.95  # a field's JSON escapes count towards its bound, so a cut text can be a little short of it


def _chars(lengths: object) -> set[int]:
    """Every ``*_chars`` bound of a lengths dataclass and of the lengths dataclasses inside it."""
    found: set[int] = set()
    for f in dataclasses.fields(lengths):  # type: ignore[arg-type]
        value = getattr(lengths, f.name)
        if dataclasses.is_dataclass(value):
            found |= _chars(value)
        elif f.name.endswith("_chars") and isinstance(value, int):
            found.add(value)
    return found


@cache
def char_bounds(method: str) -> frozenset[int]:
    """The bounds of a method's texts on the compact lengths (the embedded model's); none for an unknown method."""
    spec = registry().get(method)
    lengths = getattr(sys.modules[spec.run.__module__], "LENGTHS", {}) if spec else {}
    compact = lengths.get("compact")
    return frozenset(_chars(compact)) if compact is not None else frozenset()


def stopped_at(text: str, bounds: frozenset[int] | set[int]) -> int | None:
    """The bound a text stops at mid-sentence, or None: a text as long as a bound that does not end a sentence was
    stopped by the grammar (the model had more to say); a shorter one, or one that ends a sentence, was not."""
    size, end = len(text), text.rstrip()
    if not end or end.endswith(ENDINGS):
        return None
    return next((b for b in sorted(bounds) if b * SLACK <= size <= b), None)


def cut_words(bound: int) -> str:
    """Why a text stops at ``bound``, in the words every screen and the command line use."""
    return (
        f"this text stops mid-sentence at {bound} characters, the most its reply format allows the field it was "
        "written in (the method's compact lengths); the model wrote no more of it"
    )
