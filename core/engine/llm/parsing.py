"""Tolerant parsing of structured replies: code fences, prose around the object, trailing text."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, RootModel, ValidationError

from core.engine.llm.schemas import BoundError, conform

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
# JSON may spell a lone surrogate ("\ud800"); such a string cannot be encoded as UTF-8 (store, screen, log)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class ReplyParseError(ValueError):
    """A reply that does not hold a JSON object matching the asked schema."""

    def __init__(self, message: str, raw: str):
        super().__init__(message)
        self.raw = raw


MAX_STARTS = 16  # a reply looping on "{" (small models do) would otherwise take quadratic time to search


def _first_json_object(text: str) -> str | None:
    """The first balanced {...} in text, skipping braces inside strings; tried from the first few "{" only."""
    start, tries = text.find("{"), 0
    while start != -1 and tries < MAX_STARTS:
        tries += 1
        depth, in_str, escaped = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_str:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return text[start : i + 1]
        start = text.find("{", start + 1)
    return None


def scrub(value: Any) -> Any:
    """Strings (also inside lists and objects) with lone surrogates replaced by U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    return value


def extract_json(text: str) -> dict:
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        candidate = candidate.strip()
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            obj = _first_json_object(candidate)
            if obj is None:
                continue
            try:
                value = json.loads(obj)
            except json.JSONDecodeError:
                continue
        if isinstance(value, dict):
            return scrub(value)
    raise ReplyParseError(
        "the reply holds no complete JSON object" + (" (it looks cut off)" if "{" in text else ""), text
    )


def parse_reply(text: str, schema: type[T]) -> T:
    """The reply as ``schema``; a schema of several shapes (a ``RootModel`` over a union) gives the shape the model
    wrote, so callers read its fields directly."""
    data = extract_json(text)
    try:
        data = conform(data, schema)
    except BoundError as exc:
        raise ReplyParseError(f"the JSON breaks a bound ({exc})", text) from exc
    try:
        parsed = schema.model_validate(data)
        return parsed.root if isinstance(parsed, RootModel) else parsed
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'object'}: {e['msg']}" for e in exc.errors()[:5])
        raise ReplyParseError(f"the JSON does not match the schema ({problems})", text) from exc
