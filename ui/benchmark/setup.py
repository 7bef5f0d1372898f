"""The Benchmark page's setup: which benchmark and questions, which methods (with knobs) and ablation presets,
how many at once and on which backend. Every problem is said in place; nothing runs until all is usable."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from core.eval import PRESETS, BenchItem, BenchmarkError, EvalPlan, load_ids, select
from core.eval.mirage import check_benchmark, parse_json
from core.eval.presets import groups
from core.methods import registry
from core.paths import REPO_ROOT
from ui.common import state
from ui.common.knobs import check_knobs, knob_inputs
from ui.common import keys

SHARED = REPO_ROOT.parent / "shared" / "data" / "mirage"  # the MIRAGE files beside a development checkout
PICKS = ("N per dataset (seeded sample)", "An ids file", "Every question")
BACKENDS = ("settings", "embedded")


@dataclass
class Setup:
    plan: EvalPlan | None  # None while something is unusable
    bench_name: str = ""
    concurrency: int = 1
    backend: str = "settings"


@st.cache_data(show_spinner="Reading the benchmark…", max_entries=4)
def _read_bytes(data: bytes, name: str) -> dict[str, dict[str, Any]]:
    return check_benchmark(parse_json(data, name), name)


def _benchmark() -> tuple[dict[str, dict[str, Any]] | None, str, str | None]:
    """(the benchmark, its name, or the problem with it)."""
    default = SHARED / "benchmark.json.gz"
    source = state.kept(
        st.radio,
        "Benchmark file",
        key="bench.source",
        default="A path",
        options=["A path", "An upload"],
        horizontal=True,
    )
    if source == "An upload":
        upload = st.file_uploader("MIRAGE-format .json or .json.gz", type=["json", "gz"], key="bench.upload")
        if upload is None:
            return None, "", "Upload a benchmark file, or choose a path."
        name = upload.name
        data = upload.getvalue()
    else:
        typed = state.kept(
            st.text_input,
            "Path",
            key="bench.path",
            default=str(default) if default.is_file() else "",
            help="{dataset: {question_id: {question, options, answer}}}, .json or .json.gz",
        )
        if not typed.strip():
            return None, "", "Type the path of a MIRAGE-format benchmark file."
        path = Path(typed.strip()).expanduser()
        name = path.name
        if path.is_dir():
            return None, name, f"{path} is a folder, not a file: name the .json or .json.gz file inside it"
        try:
            data = path.read_bytes()
        except OSError as exc:
            return None, name, f"{path} cannot be read: {exc.strerror or exc}"
    try:
        return _read_bytes(data, name), name.split(".")[0], None
    except BenchmarkError as exc:
        return None, name, str(exc)


def _questions(bench: dict[str, dict[str, Any]]) -> list[BenchItem]:
    if st.session_state.get(keys.BENCH_DATASETS_OF) != list(bench):  # another benchmark: keep what it shares, or all
        before = st.session_state.get(keys.BENCH_DATASETS, st.session_state.get(keys.kept(keys.BENCH_DATASETS))) or []
        state.set_kept(keys.BENCH_DATASETS, [d for d in before if d in bench] or list(bench))
        st.session_state[keys.BENCH_DATASETS_OF] = list(bench)
    datasets = state.kept(st.multiselect, "Datasets", key=keys.BENCH_DATASETS, default=list(bench), options=list(bench))
    if not datasets:
        raise BenchmarkError("Choose at least one dataset.")
    pick = state.kept(st.radio, "Questions", key="bench.pick", default=PICKS[0], options=PICKS)
    if pick == PICKS[0]:
        left, right = st.columns(2)
        n = state.kept(left.number_input, "Questions per dataset", key="bench.n", default=4, min_value=1, step=1)
        seed = state.kept(
            right.number_input,
            "Seed",
            key="bench.seed",
            default=0,
            min_value=0,
            step=1,
            help="The same seed draws the same questions; a larger N extends a smaller one",
        )
        return select(bench, datasets=datasets, sample=int(n), seed=int(seed))
    if pick == PICKS[1]:
        default = SHARED / "dev_ids.json"
        typed = state.kept(
            st.text_input,
            "Ids file",
            key="bench.ids",
            help="{dataset: [question_id, ...]}",
            default=str(default) if default.is_file() else "",
        )
        limit = state.kept(
            st.number_input,
            "At most this many per dataset (0: all)",
            key="bench.limit",
            default=0,
            min_value=0,
            step=1,
            help="The first ones of the ids file, as --limit does",
        )
        if not typed.strip():
            raise BenchmarkError("Type the path of an ids file.")
        ids = load_ids(Path(typed.strip()).expanduser())
        lacking = [d for d in ids if d not in bench]
        if lacking:
            st.warning(
                f"The ids file names dataset(s) {', '.join(lacking)} that the benchmark lacks; the benchmark "
                f"has: {', '.join(bench)}. Only the datasets both name can run."
            )
        left_out = [d for d in datasets if d not in ids]
        if left_out:
            st.caption(f"The ids file has no questions for {', '.join(left_out)}.")
        return select(bench, ids, [d for d in datasets if d in ids] or datasets, int(limit) or None)
    return select(bench, datasets=datasets)


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


def _arms(problems: list[str]) -> tuple[list[str], dict[str, dict[str, Any]], list[str]]:
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


def backend_label(choice: str) -> str:
    if choice == "embedded":
        return "Embedded model"
    if st.session_state.get(keys.LLM_OVERRIDE) is not None:
        return f"Settings: {state.llm().model_name}"
    ep = state.endpoint()
    return "Settings: embedded model" if ep.embedded else f"Settings: {ep.model or 'endpoint'} at {ep.base_url}"


def setup_form() -> Setup:
    problems: list[str] = []
    # Two columns, the run's settings in a row beneath: three columns leave each under 220 px at 1024 px.
    which, arms = st.columns(2, gap="large")
    items: list[BenchItem] = []
    with which:
        st.markdown("**Questions**")
        bench, name, problem = _benchmark()
        if problem:
            st.error(problem)
            problems.append(problem)
        else:
            try:
                items = _questions(bench)
            except BenchmarkError as exc:
                st.error(str(exc))
                problems.append(str(exc))
    with arms:
        st.markdown("**Methods and ablations**")
        arm_problems: list[str] = []
        methods, params, presets = _arms(arm_problems)
        for problem in arm_problems:
            st.error(problem)
        problems += arm_problems
    st.markdown("**Run**")
    at_once, on = st.columns(2, gap="large")
    with at_once:
        concurrency = state.kept(
            st.number_input,
            "Questions at once",
            key="bench.concurrency",
            default=2,
            min_value=1,
            max_value=64,
            step=1,
            help="Runs in flight together (the embedded model serves a few; an endpoint with many slots serves more)",
        )
    offered = list(BACKENDS) if not state.uses_embedded_model() else ["settings"]
    labels = {choice: backend_label(choice) for choice in offered}
    with on:
        backend = state.kept(
            st.radio,
            "Backend",
            key="bench.backend",
            default="settings",
            options=offered,
            format_func=labels.__getitem__,
        )
    if problems or not items:
        return Setup(None, name, int(concurrency), backend)
    return Setup(
        EvalPlan(methods=methods, items=items, params=params, presets=presets), name, int(concurrency), backend
    )
