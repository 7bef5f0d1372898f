"""Words as the linker compares them: lower case, a light stem, stop words and filler left out; numbers kept whole
(a dose or a threshold is a word that must match exactly)."""

from __future__ import annotations

import re
from functools import lru_cache

_TOKEN = re.compile(r"\d+(?:[.,]\d+)?|[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
STOP = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here hers
    him his how i if in into is it its itself just may me might more most must my no nor not of off on once only or
    other our out over own same shall she should so some such than that the their them then there these they this
    those through to too under until up very was we were what when where which while who whom why will with would you
    your yes also however therefore thus since given based likely typically often usually which patient patients
    option options answer correct appropriate most immediate management""".split()
)


@lru_cache(maxsize=4096)
def stem(word: str) -> str:
    """A light suffix stripper: enough that "transfers"/"transferred"/"transfer" meet, never a dictionary."""
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
    return word


def content_words(text: str) -> list[str]:
    """The words that carry meaning, stemmed, in order, each once."""
    return list(
        dict.fromkeys(stem(w) for w in _TOKEN.findall(text.lower()) if w not in STOP and (len(w) > 1 or w.isdigit()))
    )


def numbers(text: str) -> set[str]:
    return {n.replace(",", ".") for n in _NUMBER.findall(text)}
