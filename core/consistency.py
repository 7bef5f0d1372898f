"""Cheap checks of an answer against itself: does the chosen option agree with the reasoning written for it?

A small model can pick one letter and argue for another (its reasoning names B's drug, its answer field says A).
The check reads which options the rationale names, by letter ("option B", "(B)", "answer is B") or by the option's
own words, and flags the answer when the rationale never names the chosen option but does name another. It is a
prompt to read the reasoning, not a verdict: a rationale that argues by elimination can name only the others.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from core.trace import Answer

_STOP = frozenset("a an and as at by for from in into is of on or the to with without no not only its their".split())
MIN_WORDS_MATCHED = 0.75  # the share of an option's content words the rationale must use to name it by its words
DISTINCTIVE_CHARS = 6  # a word of an option at least this long, in no other option, names it on its own


class Mismatch(BaseModel):
    chosen: str
    argued: str  # the option the rationale names last
    named: list[str]  # every option the rationale names, in order of first mention

    def message(self, options: dict[str, str]) -> str:
        return (f"The answer is {self.chosen}, but its reasoning argues for {self.argued} "
                f"(“{options.get(self.argued, '')}”) and never names {self.chosen}. Read the reasoning before "
                "trusting the letter.")


def _words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP]


def _letter_mentions(letter: str, text: str) -> list[int]:
    patterns = (rf"\b(?:option|answer|choice)\s*(?:is\s*)?\(?{letter}\)?(?![\w-])", rf"\({letter}\)",
                rf"(?<![\w-]){letter}[.:)](?=\s|$)")
    return [m.start() for p in patterns for m in re.finditer(p, text)]


def _text_mention(option: str, others: list[str], text: str, stem: str) -> int | None:
    """Where the rationale uses the option's own words: the whole text, a word no other option and not the
    question itself has (a drug's name, say), or most of its content words."""
    at = text.lower().find(option.lower().strip(" ."))
    if at >= 0:
        return at
    wanted, used = set(_words(option)), set(_words(text))
    elsewhere = {w for other in [*others, stem] for w in _words(other)}
    distinctive = {w for w in wanted - elsewhere if len(w) >= DISTINCTIVE_CHARS} & used
    if distinctive:
        return min(re.search(rf"\b{w}\b", text.lower()).start() for w in distinctive)
    if len(wanted) < 2 or len(wanted & used) / len(wanted) < MIN_WORDS_MATCHED:
        return None
    return min(re.search(rf"\b{w}\b", text.lower()).start() for w in wanted & used)


def named_options(rationale: str, options: dict[str, str], question: str = "") -> list[str]:
    """Option letters the rationale names, ordered by where it first names each; words it repeats from the
    question (the vignette's drug, say) do not name an option."""
    first: dict[str, int] = {}
    for letter, option in options.items():
        places = _letter_mentions(re.escape(letter), rationale)
        at = _text_mention(option, [o for k, o in options.items() if k != letter], rationale, question)
        if at is not None:
            places.append(at)
        if places:
            first[letter] = min(places)
    return sorted(first, key=first.get)


def _last_named(rationale: str, options: dict[str, str], named: list[str]) -> str:
    def last(letter: str) -> int:
        places = _letter_mentions(re.escape(letter), rationale)
        at = rationale.lower().rfind(options[letter].lower().strip(" ."))
        return max(places + [at])

    return max(named, key=last)


def check_answer(answer: Answer | None, options: dict[str, str], question: str = "") -> Mismatch | None:
    """A mismatch when the chosen option is never named by the rationale and another one is."""
    if answer is None or not answer.choice or not answer.rationale or not options:
        return None
    named = named_options(answer.rationale, options, question)
    if not named or answer.choice in named:
        return None
    return Mismatch(chosen=answer.choice, argued=_last_named(answer.rationale, options, named), named=named)
