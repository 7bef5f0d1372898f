"""The least reply lengths, for the tests that run each method on the embedded model to show every stage runs.

The embedded model writes about ten tokens a second on one core and reads what earlier agents wrote at about twenty,
so a smoke test's time goes to the texts its agents write. Here every text field of a method's compact lengths (the
embedded model's) is bounded at ``CHARS`` characters, every "at most N sentences" asks for at most two and every list
holds one item: the same schemas, grammar, prompts and parsing, with each text a phrase, which the grammar closes
mid-word if it must (as it does at any bound). A method then writes about a third of the tokens its compact lengths
allow. Token budgets stay as they are: each still fits the longest reply its schema allows.
"""

from __future__ import annotations

import dataclasses
import sys

import pytest

from core.engine.methods import registry

CHARS = 80
SENTENCES = 2  # the fewest the prompts' wording has a word for (``core.engine.methods.templates.NUMBERS``)


def least(lengths):
    """``lengths`` (a lengths dataclass, and those inside it) with every text bound, sentence count and list bound at
    its least."""
    changes = {}
    for field in dataclasses.fields(lengths):
        value = getattr(lengths, field.name)
        if dataclasses.is_dataclass(value):
            changes[field.name] = least(value)
        elif isinstance(value, bool) or not isinstance(value, int) or not value:
            continue  # a switch, or no bound at all
        elif "tokens" in field.name:
            continue
        elif field.name.endswith("_chars"):
            changes[field.name] = min(value, CHARS)
        elif field.name.endswith("sentences"):
            changes[field.name] = min(value, SENTENCES)
        else:  # the most items of a list (SEMA-RAG's entities, MASS-RAG's spans, a reader's cited ids, ...)
            changes[field.name] = 1
    return dataclasses.replace(lengths, **changes)


@pytest.fixture
def least_lengths(monkeypatch):
    """Every method's compact lengths at their least, for this test."""
    for spec in registry().values():
        table = getattr(sys.modules[spec.run.__module__], "LENGTHS", None)
        if table is not None:
            monkeypatch.setitem(table, "compact", least(table["compact"]))
