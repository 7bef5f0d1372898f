"""A reply model in each structured-output dialect, and the local checks that stand in for what a dialect cannot say.

The reply is always validated against the method's own pydantic model, whatever the server was sent, so every rung
of the ladder gives the same objects: a strict provider gets a strict-valid form (root object, objects closed, every
field required, optional ones nullable, length and count bounds moved into descriptions), a json_object or
prompt-only server gets the schema in the prompt, and the bounds are applied here after the reply. A list asked for
with a count (``Count``) may come back shorter from a server that does not hold to it: it is used as written, down to
the fewest items its field can work with, and ``shortfalls`` says what is missing.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from core.engine.trace import Shortfall

# What every strict dialect takes (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas).
STRUCTURAL = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "enum", "anyOf", "description"}
)
# Bounds a dialect may refuse; said in the description instead, and enforced after the reply.
BOUNDS = {
    "maxLength": "at most {} characters",
    "minLength": "at least {} characters",
    "maxItems": "at most {} items",
    "minItems": "at least {} items",
}
WRAPPER = "reply"  # the property a non-object root travels in, since a strict root must be an object


class BoundError(ValueError):
    """A reply that breaks a bound no cut can mend (too short a text)."""


@dataclass(frozen=True)
class Count:
    """A list field's count as asked (its schema's ``minItems``), beside the fewest items the field's own model
    accepts: a shorter list is used, and named by ``shortfalls``. ``noun``: its items in words."""

    asked: int
    noun: str


def shortfalls(reply: BaseModel) -> list[Shortfall]:
    """The counted lists of a parsed reply (its nested objects included) that hold fewer items than asked."""
    found = []
    for name, info in type(reply).model_fields.items():
        value = getattr(reply, name)
        for count in (m for m in info.metadata if isinstance(m, Count)):
            if isinstance(value, list) and len(value) < count.asked:
                found.append(Shortfall(field=name, noun=count.noun, asked=count.asked, wrote=len(value)))
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, BaseModel):
                found += shortfalls(item)
    return found


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's own JSON schema, with its ``$ref``s inlined (the reply models hold no recursion)."""
    return _inline_schema(model)


@lru_cache(maxsize=512)
def _inline_schema(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                target = inline(defs[node["$ref"].rsplit("/", 1)[-1]])
                return {**target, **{k: inline(v) for k, v in node.items() if k != "$ref"}}
            return {k: inline(v) for k, v in node.items()}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return inline(raw)


@dataclass(frozen=True)
class StrictForm:
    schema: dict[str, Any]
    wrapped: bool  # the reply arrives as {"reply": ...}


def strict_form(model: type[BaseModel], keywords: frozenset[str] = frozenset()) -> StrictForm:
    """The model in a strict dialect that takes the structural keywords and ``keywords`` besides."""
    body = _strict(json_schema(model), keywords)
    if body.get("type") == "object" and "properties" in body:
        return StrictForm(body, wrapped=False)
    wrapper = {"type": "object", "properties": {WRAPPER: body}, "required": [WRAPPER], "additionalProperties": False}
    return StrictForm(wrapper, wrapped=True)


def _strict(node: dict[str, Any], keywords: frozenset[str]) -> dict[str, Any]:
    node = copy.deepcopy(node)
    if "const" in node:
        node["enum"] = [node.pop("const")]
    said = []
    for key in list(node):
        if key in STRUCTURAL or key in keywords:
            continue
        value = node.pop(key)
        if key in BOUNDS and value:  # "at least 0 items" says nothing
            said.append(BOUNDS[key].format(value))
    if said:
        node["description"] = f"{node.get('description', '')} ({'; '.join(said)})".strip()
    if isinstance(node.get("properties"), dict):
        required = set(node.get("required", []))
        properties = {}
        for name, sub in node["properties"].items():
            sub = _strict(sub, keywords)
            properties[name] = sub if name in required or _nullable(sub) else {"anyOf": [sub, {"type": "null"}]}
        node.update(properties=properties, required=list(properties), additionalProperties=False)
    if isinstance(node.get("items"), dict):
        node["items"] = _strict(node["items"], keywords)
    if isinstance(node.get("anyOf"), list):
        node["anyOf"] = [_strict(sub, keywords) for sub in node["anyOf"]]
    return node


def _nullable(node: dict[str, Any]) -> bool:
    kinds = node.get("type")
    return (
        kinds == "null"
        or (isinstance(kinds, list) and "null" in kinds)
        or any(_nullable(sub) for sub in node.get("anyOf", []))
    )


def instruction(model: type[BaseModel]) -> str:
    """What a prompt says when the server cannot hold the reply to its shape (json_object, prompt only): the word
    JSON (DeepSeek's JSON mode asks for it) and the schema itself."""
    schema = _without_titles(json_schema(model))
    return (
        "Reply with only one JSON object (no other text, no code fence) that follows this JSON schema:\n"
        + json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    )


def _without_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_titles(v) for k, v in node.items() if k != "title"}
    if isinstance(node, list):
        return [_without_titles(v) for v in node]
    return node


def conform(data: Any, model: type[BaseModel]) -> Any:
    """A parsed reply brought to the model's own schema where a dialect could not hold it there: unwrapped from a
    strict root, nulls dropped where the field is optional and not nullable, texts and lists cut to their bounds.
    Raises ``BoundError`` for a text too short. A list shorter than its ``minItems`` is left to the model's own
    validation: a counted one (``Count``) is used down to the fewest items its field takes."""
    schema = json_schema(model)
    if schema.get("type") != "object" and isinstance(data, dict) and set(data) == {WRAPPER}:
        data = data[WRAPPER]
    return _conform(data, schema, "")


_TYPES = {str: "string", list: "array", dict: "object", bool: "boolean", int: "integer", float: "number"}


def _branch(data: Any, node: dict[str, Any]) -> dict[str, Any]:
    """The branch of an ``anyOf`` a non-object value belongs to (``str | None`` and the like)."""
    kind = _TYPES.get(type(data))
    for sub in node.get("anyOf", []):
        if sub.get("type") == kind or (kind == "integer" and sub.get("type") == "number"):
            return sub
    return node


def _conform(data: Any, node: dict[str, Any], where: str) -> Any:
    if not isinstance(data, dict):
        node = _branch(data, node)
    if isinstance(data, str):
        limit = node.get("maxLength")
        if limit is not None and len(data) > limit:
            return data[:limit]
        if len(data) < node.get("minLength", 0):
            raise BoundError(f"{where or 'the reply'}: at least {node['minLength']} characters")
        return data
    if isinstance(data, list):
        if "maxItems" in node:
            data = data[: node["maxItems"]]
        items = node.get("items", {})
        return [_conform(v, items, f"{where}[{i}]") for i, v in enumerate(data)]
    if isinstance(data, dict):
        branches = [node, *node.get("anyOf", [])]
        fields = {k: v for b in branches for k, v in b.get("properties", {}).items()}
        required = (
            set().union(*(set(b.get("required", [])) for b in branches if "properties" in b)) if fields else set()
        )
        out = {}
        for key, value in data.items():
            sub = fields.get(key, {})
            if value is None and key not in required and not _nullable(sub):
                continue  # a strict dialect's stand-in for leaving the field out
            out[key] = _conform(value, sub, f"{where}.{key}" if where else key)
        return out
    return data
