"""Choosing a method, and widgets for its knobs built from its parameter class: type, default, bounds, description."""

from __future__ import annotations

import enum
import json
import types
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
import streamlit as st
from pydantic import ValidationError
from pydantic.fields import FieldInfo

from core.engine.methods import registry
from core.engine.methods.contract import MethodParams, MethodSpec
from ui.common import keys
from ui.common.state import kept


def _unwrap_optional(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _bounds(info: FieldInfo) -> dict[str, Any]:
    bounds: dict[str, Any] = {}
    for item in info.metadata:
        if isinstance(item, annotated_types.Ge | annotated_types.Gt):
            bounds["min_value"] = getattr(item, "ge", None) if isinstance(item, annotated_types.Ge) else item.gt
        if isinstance(item, annotated_types.Le | annotated_types.Lt):
            bounds["max_value"] = getattr(item, "le", None) if isinstance(item, annotated_types.Le) else item.lt
    return bounds


def knob_widget(name: str, info: FieldInfo, value: Any, key: str) -> Any:
    """One widget chosen by the field's type; what cannot be a widget is edited as JSON."""
    label, help_ = name.replace("_", " ").capitalize(), info.description
    kind = _unwrap_optional(info.annotation)
    if kind is bool and kind is not info.annotation:  # None lets the method decide: a toggle would lose it
        choices = [None, True, False]
        return st.selectbox(
            label,
            choices,
            index=choices.index(value),
            help=help_,
            key=key,
            format_func=lambda v: "automatic" if v is None else ("on" if v else "off"),
        )
    if kind is bool:
        return st.toggle(label, value=bool(value), help=help_, key=key)
    if kind is int:
        return st.number_input(label, value=value, step=1, help=help_, key=key, **_bounds(info))
    if kind is float:
        bounds = {k: float(v) for k, v in _bounds(info).items()}
        return st.number_input(
            label, value=None if value is None else float(value), step=0.1, format="%.2f", help=help_, key=key, **bounds
        )
    choices: list[Any] | None = None
    if get_origin(kind) is Literal:
        choices = list(get_args(kind))
    elif isinstance(kind, type) and issubclass(kind, enum.Enum):
        choices = list(kind)
    if choices is not None:
        if kind is not info.annotation:  # None is a choice of its own: the method or backend decides
            choices = [None, *choices]
        return st.selectbox(
            label,
            choices,
            index=choices.index(value) if value in choices else 0,
            help=help_,
            key=key,
            format_func=lambda v: "automatic" if v is None else str(v),
        )
    if kind is str:
        return st.text_input(label, value=value or "", help=help_, key=key)
    text = st.text_input(f"{label} (JSON)", value=json.dumps(value), help=help_, key=key)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text  # the parameter class says what is wrong with it


def _copy_key(widget_key: str, default: Any) -> str:
    """Where a knob's value is kept across pages: per the starting point (Settings' default) it was changed from."""
    return keys.knob_copy(widget_key, default)


def knob_inputs(
    spec: MethodSpec, *, key: str, defaults: dict[str, Any] | None = None, keep: bool = True
) -> dict[str, Any]:
    """A widget per knob, starting from ``defaults`` (the user's) or else the paper's default; with ``keep``, a value
    changed here is still there when the user comes back from another page."""
    defaults = defaults or {}
    values = {}
    for name, info in spec.params.model_fields.items():
        widget_key = keys.knob_widget(key, spec.name, name)
        # Streamlit forgets a widget's value while its page is not shown; this copy brings it back on return, as
        # long as the starting point (Settings' default for the knob) is the one it was changed from
        copy = _copy_key(widget_key, defaults.get(name))
        start = defaults.get(name, info.get_default(call_default_factory=True))
        values[name] = knob_widget(name, info, st.session_state.get(copy, start) if keep else start, key=widget_key)
        if keep:
            st.session_state[copy] = values[name]
    return values


def preset_knobs(spec: MethodSpec, *, key: str, defaults: dict[str, Any], values: dict[str, Any]) -> None:
    """The knob widgets, not on screen now, start from ``values`` next time (a run's knobs, to ask it again)."""
    for name in spec.params.model_fields:
        if name in values:
            widget_key = keys.knob_widget(key, spec.name, name)
            st.session_state.pop(widget_key, None)
            st.session_state[_copy_key(widget_key, defaults.get(name))] = values[name]


def changed_knobs(method: str, params: dict[str, Any]) -> str:
    """A run's knobs that differ from its method's defaults, e.g. 'k=8, rounds=2'; 'defaults' when none does."""
    spec = registry().get(method)
    defaults = spec.params().model_dump() if spec else {}
    changed = [f"{k}={v}" for k, v in params.items() if k not in defaults or defaults[k] != v]
    return ", ".join(changed) or "defaults"


def check_knobs(spec: MethodSpec, values: dict[str, Any]) -> tuple[MethodParams | None, str | None]:
    """The parameter object, or a message naming each bad knob."""
    try:
        return spec.params(**values), None
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'knobs'}: {e['msg']}" for e in exc.errors())
        return None, f"{spec.label} knobs: {problems}"


def method_picker(key: str, label: str = "Method") -> MethodSpec:
    """A method from the registry, with its one-line description."""
    methods = registry()
    name = kept(
        st.selectbox,
        label,
        key=key,
        default=next(iter(methods)),
        options=list(methods),
        format_func=lambda n: methods[n].label,
    )
    spec = methods[name]
    badge = ":blue-badge[searches the corpus]" if spec.uses_retrieval else ":gray-badge[no corpus needed]"
    st.markdown(f"{badge} :gray[{spec.description}]")
    return spec


def method_label(name: str) -> str:
    """A method's display name; a saved run may name a method this installation no longer has."""
    spec = registry().get(name)
    return spec.label if spec else name
