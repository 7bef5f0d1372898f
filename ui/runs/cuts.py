"""One way to say a text was cut, wherever a run's text is drawn, and where the rest is: a reply its token budget
ended, a field its reply format's bound stopped mid-sentence (the model wrote no more of either), or a text this
screen shortened (the whole of it is one click or one section away)."""

from __future__ import annotations

from core.engine.methods.bounds import cut_words, stopped_at
from ui.common.text import md, short

ICON = ":material/content_cut:"
BUDGET = (
    f"{ICON} Cut off by its token budget (Max tokens): the model had not finished this reply, and there is no rest "
    "to show; a larger Max tokens lets it finish."
)


def bound_note(bound: int) -> str:
    return f"{ICON} Cut: {cut_words(bound)}."


def cut_note(text: str, bounds: frozenset[int] | set[int], *, budget: bool = False) -> str | None:
    """Why a text drawn from a reply stops where it does, or None when it ended where its writer chose."""
    if budget:
        return BUDGET
    bound = stopped_at(text, bounds)
    return bound_note(bound) if bound is not None else None


def cut_suffix(text: str, bounds: frozenset[int] | set[int]) -> str:
    """What follows a text drawn inline (a list item, a field, where a caption cannot go) when a bound stopped it:
    an ellipsis and the note; nothing when it ended where its writer chose."""
    note = cut_note(text, bounds)
    return f" … :gray[{note}]" if note else ""


def clipped(text: str, limit: int, where: str) -> str:
    """A text shortened to ``limit`` characters for this line, as literal Markdown, saying so and where the whole
    of it is (``where``: 'in the answer card above')."""
    shown = short(text, limit)
    if shown == " ".join(text.split()):
        return md(shown)
    return f"{md(shown)} :gray[({ICON} shortened here, {len(text):,} characters in all: the whole text is {md(where)})]"
