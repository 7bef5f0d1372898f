"""The structured-output ladder: when a server refuses a reply format, the call steps down to one it takes, and the
server's refusals (a format, a sampling field, the token-limit field) are remembered for that endpoint and model for
as long as the process runs, so later calls go straight to what works.

strict json_schema -> json_schema (not strict) -> json_object with the schema in the prompt -> the prompt alone.
Every rung's reply is validated locally against the method's model (``core.engine.llm.schemas``), so the methods see the
same objects whichever rung answered.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

from core.engine.llm.profiles import Dialect

RUNGS: dict[Dialect, tuple[Dialect, ...]] = {
    "grammar": ("grammar", "json_object", "prompt"),
    "strict": ("strict", "json_schema", "json_object", "prompt"),
    "json_schema": ("json_schema", "json_object", "prompt"),
    "json_object": ("json_object", "prompt"),
    "prompt": ("prompt",),
}
# How the trace names the mode that answered.
MODE_NAMES: dict[Dialect, str] = {
    "grammar": "json_schema (grammar)",
    "strict": "strict json_schema",
    "json_schema": "json_schema, not strict",
    "json_object": "json_object, schema in the prompt",
    "prompt": "schema in the prompt only",
}
TEXT_MODE = "text"  # a call that asked for no schema

_FORMAT_WORDS = re.compile(
    r"response_format|json_schema|json_object|json schema|schema|structured output|"
    r"additionalProperties|strict",
    re.I,
)
# How servers name a request field they refuse: OpenAI's "Unsupported parameter: 'seed'" / "param": "seed",
# Gemini's 'Unknown name "seed"', Azure's "Unrecognized request argument supplied: seed", pydantic-validated servers'
# (vLLM) "'loc': ('body', 'seed') ... Extra inputs are not permitted", others' "seed is not supported".
_FIELD_PATTERNS = (
    re.compile(r"[Uu]nsupported (?:parameter|value):? '([a-z_]+)'"),
    re.compile(r'[Uu]nknown (?:name|field|parameter):? ?["\']([a-z_]+)["\']'),
    re.compile(r"[Uu]nrecognized request arguments? supplied: ([a-z_]+)"),
    re.compile(r"'loc': \('body', '([a-z_]+)'\)"),
    re.compile(r"['\"]?([a-z_]+)['\"]? (?:is|are) not (?:supported|permitted|allowed)"),
)


def refused_field(status: int, message: str, param: str | None, candidates: frozenset[str]) -> str | None:
    """The request field a 400/422 refuses, when it is one of ``candidates`` (fields a call can do without)."""
    if status not in (400, 422):
        return None
    if param in candidates:
        return param
    for pattern in _FIELD_PATTERNS:
        for name in pattern.findall(message):
            if name in candidates:
                return name
    return None


# How servers say a token limit is above the model's output limit: OpenAI's "supports at most 16384 completion
# tokens", Anthropic's "64000, which is the maximum allowed number of output tokens", Gemini's "from 1 (inclusive) to
# 65537 (exclusive)".
_LIMIT_PATTERNS = (
    (re.compile(r"at most (\d+) (?:completion|output)? ?tokens"), 0),
    (re.compile(r"(\d+), which is the maximum"), 0),
    (re.compile(r"to (\d+) \(exclusive\)"), 1),
)


def refused_limit(status: int, message: str) -> int | None:
    """The most output tokens a 400 says the model takes, when it refused a token limit for its size."""
    if status != 400:
        return None
    for pattern, past in _LIMIT_PATTERNS:
        if found := pattern.search(message):
            return int(found.group(1)) - past
    return None


def refused_format(status: int, message: str) -> bool:
    """Whether a 400/422 refuses the reply format (the schema or the response_format itself)."""
    return status in (400, 422) and bool(_FORMAT_WORDS.search(message))


@dataclass
class Learned:
    """What one endpoint and model turned out to refuse."""

    rung: Dialect | None = None  # the rung that last worked, or to start from
    dropped: set[str] = field(default_factory=set)  # request fields it refused
    token_field: str | None = None  # the token-limit field it asked for instead of the profile's
    token_limit: int | None = None  # the most output tokens it said the model takes


class Memory:
    """What each endpoint and model refused, for the life of the process (one server serves many sessions)."""

    def __init__(self) -> None:
        self._learned: dict[str, Learned] = {}
        self._lock = threading.Lock()

    def get(self, backend: str) -> Learned:
        with self._lock:
            learned = self._learned.setdefault(backend, Learned())
            return Learned(learned.rung, set(learned.dropped), learned.token_field, learned.token_limit)

    def update(
        self,
        backend: str,
        *,
        rung: Dialect | None = None,
        dropped: str | None = None,
        token_field: str | None = None,
        token_limit: int | None = None,
    ) -> None:
        with self._lock:
            learned = self._learned.setdefault(backend, Learned())
            if rung is not None:
                learned.rung = rung
            if dropped is not None:
                learned.dropped.add(dropped)
            if token_field is not None:
                learned.token_field = token_field
            if token_limit is not None:
                learned.token_limit = token_limit

    def forget(self, backend: str) -> None:
        with self._lock:
            self._learned.pop(backend, None)


MEMORY = Memory()


def rungs_from(first: Dialect, learned: Dialect | None) -> tuple[Dialect, ...]:
    """The rungs a call may try, starting where the endpoint last answered."""
    rungs = RUNGS[first]
    return rungs[rungs.index(learned) :] if learned in rungs else rungs
