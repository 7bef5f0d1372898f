"""``--param KNOB=VALUE`` on the command line: values read as JSON, and errors that name the knob and what it
accepts."""

from __future__ import annotations

import json
import types
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import ValidationError
from pydantic.fields import FieldInfo

from core.engine.methods.contract import MethodSpec


def param_value(text: str) -> Any:
    """JSON when it parses (numbers, true/false, lists), the text itself otherwise."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def allowed(info: FieldInfo) -> str:
    """What a knob accepts, in words: its type, bounds or choices."""
    kind = info.annotation
    if get_origin(kind) in (Union, types.UnionType):
        kind = next((a for a in get_args(kind) if a is not type(None)), kind)
    if get_origin(kind) is Literal:
        return "one of " + ", ".join(map(str, get_args(kind)))
    if kind is bool:
        return "true or false"
    low = _bound(info, annotated_types.Ge | annotated_types.Gt, ("ge", "gt"))
    high = _bound(info, annotated_types.Le | annotated_types.Lt, ("le", "lt"))
    name = {int: "a whole number", float: "a number", str: "text"}.get(kind, "JSON")
    if low is not None and high is not None:
        return f"{name} from {low} to {high}"
    return name + (f" of at least {low}" if low is not None else f" of at most {high}" if high is not None else "")


def _bound(info: FieldInfo, kinds: Any, names: tuple[str, str]) -> Any:
    for item in info.metadata:
        if isinstance(item, kinds):
            for name in names:
                if (value := getattr(item, name, None)) is not None:
                    return value
    return None


def knob_errors(spec: MethodSpec, exc: ValidationError, prefix: str = "") -> str:
    """One line per bad knob: ``--param rounds=9: i-MedRAG's rounds takes a whole number from 1 to 8``."""
    fields = spec.params.model_fields
    lines = []
    for error in exc.errors():
        knob = str(error["loc"][0]) if error["loc"] else ""
        shown = f"--param {prefix}{knob}" + (f"={json.dumps(error['input'])}" if knob in fields else "")
        if knob not in fields:
            lines.append(f"{shown}: {spec.label} has no knob {knob!r}; its knobs are {', '.join(fields) or 'none'}")
        else:
            lines.append(f"{shown}: {spec.label}'s {knob} takes {allowed(fields[knob])} ({error['msg'].lower()})")
    return "\n".join(lines)
