"""Prompts: the template files in ``prompts/`` and the messages a call sends, with the words several methods' prompts
share (a step's length in sentences)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template
from typing import Any

PROMPTS_DIR = Path(__file__).parent / "prompts"


@cache
def _template(name: str) -> Template:
    return Template((PROMPTS_DIR / f"{name}.txt").read_text(encoding="utf-8"))


def prompt(name: str, **values: Any) -> str:
    """Fill ``prompts/<name>.txt`` ($placeholders, so JSON braces need no escaping)."""
    return _template(name).substitute(**{k: str(v) for k, v in values.items()})


def messages(system: str, user: str, instructions: str = "") -> list[dict[str, str]]:
    """A system and a user message. Agents of one method share its system prompt and start their user text with
    what they share (documents, question, history), so the server reads that prefix once for all of them; a role's
    own standing instructions (``instructions``) go last, after the user text."""
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": f"{user.rstrip()}\n\n{instructions.strip()}" if instructions else user},
    ]


NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 7: "seven"}


def at_most(sentences: int) -> str:
    return f"at most {NUMBERS[sentences]} sentences"


def in_at_most(sentences: int | None) -> str:
    """What a prompt says of a step's length: " in at most three sentences", or nothing where it has no bound."""
    return f" in {at_most(sentences)}" if sentences else ""


def briefly(brief: bool) -> str:
    """A team's system prompt's $brief: every agent told to be brief where the backend's lengths ask for it (the
    embedded model's); on the papers' lengths each agent writes as its own instruction says."""
    return ", be brief," if brief else ""
