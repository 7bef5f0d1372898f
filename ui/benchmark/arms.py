"""The Benchmark's arms: the methods with their knobs, and the ablation presets from the papers (a group of them
added in one click, with the full method to compare them with)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.engine.methods import registry
from core.studio.eval import PRESETS
from core.studio.eval.presets import groups
from ui.common import keys, state
from ui.common.knobs import check_knobs, knob_inputs


def _add_group() -> None:
    """One click: the ablation's presets, and the full method to compare them with."""
    name = st.session_state[keys.BENCH_GROUP]
    st.session_state[keys.BENCH_GROUP] = None  # a click, not a lasting choice
    if name is None:
        return
    members = groups()[name]
    state.set_kept(
        keys.BENCH_PRESETS,
        list(dict.fromkeys([*st.session_state.get(keys.BENCH_PRESETS, []), *(p.name for p in members)])),
    )
    state.set_kept(
        keys.BENCH_METHODS, list(dict.fromkeys([*st.session_state.get(keys.BENCH_METHODS, []), members[0].method]))
    )


def arms(problems: list[str]) -> tuple[list[str], dict[str, dict[str, Any]], list[str]]:
    methods = registry()
    chosen = state.kept(
        st.multiselect,
        "Methods",
        key=keys.BENCH_METHODS,
        default=["cot"],
        options=list(methods),
        format_func=lambda n: methods[n].label,
    )
    st.selectbox(
        "Add an ablation from the papers",
        list(groups()),
        index=None,
        key=keys.BENCH_GROUP,
        on_change=_add_group,
        placeholder="its presets, and the full method to compare with",
        help="SEMA-RAG without the I-, E- or A-Agent; Discuss-RAG without brainstorming or verification; "
        "MedRGAG without KGCC or KADS; MASS-RAG with one view at a time; i-MedRAG 1–4 rounds × "
        "1–3 queries; MedRAG searching with the options too",
    )
    presets = state.kept(
        st.multiselect,
        "Presets",
        key=keys.BENCH_PRESETS,
        default=[],
        options=list(PRESETS),
        format_func=lambda n: PRESETS[n].label,
    )
    params: dict[str, dict[str, Any]] = {}
    preset_methods = {PRESETS[p].method for p in presets}
    for name in dict.fromkeys([*chosen, *(PRESETS[p].method for p in presets)]):
        spec = methods[name]
        with st.expander(
            f"{spec.label} knobs"
            + (" (its presets too, but for the knob each one changes)" if name in preset_methods else "")
        ):
            values = knob_inputs(spec, key=keys.BENCH_KNOBS, defaults=state.knob_defaults(name))
        checked, problem = check_knobs(spec, values)
        if problem:
            problems.append(problem)
            continue
        defaults = spec.params().model_dump()
        params[name] = {k: v for k, v in checked.model_dump().items() if v != defaults[k]}
    if not chosen and not presets:
        problems.append("Choose at least one method or preset.")
    return chosen, params, presets
