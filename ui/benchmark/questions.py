"""The Benchmark's questions: which MIRAGE-format file (a path or an upload) and which of its questions (a seeded
sample per dataset, an ids file, or all). Every problem is said where it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from core.engine.paths import REPO_ROOT
from core.studio.eval import BenchItem, BenchmarkError, load_ids, select
from core.studio.eval.mirage import check_benchmark, parse_json
from ui.common import keys, state

SHARED = REPO_ROOT.parent / "shared" / "data" / "mirage"  # the MIRAGE files beside a development checkout
PICKS = ("N per dataset (seeded sample)", "An ids file", "Every question")


@st.cache_data(show_spinner="Reading the benchmark…", max_entries=4)
def _read_bytes(data: bytes, name: str) -> dict[str, dict[str, Any]]:
    return check_benchmark(parse_json(data, name), name)


def whole_number(where: Any, label: str, key: str, default: int, *, minimum: int = 0, **kwargs: Any) -> int:
    """A kept whole-number input drawn in ``where`` (``st`` or a column)."""
    return int(state.kept(where.number_input, label, key=key, default=default, min_value=minimum, step=1, **kwargs))


def _path_input(label: str, key: str, default: Path, help: str) -> str:
    """A file's path as typed, starting from ``default`` where that file is here."""
    return state.kept(st.text_input, label, key=key, default=str(default) if default.is_file() else "", help=help)


def benchmark() -> tuple[dict[str, dict[str, Any]] | None, str, str | None]:
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
        typed = _path_input(
            "Path", "bench.path", default, "{dataset: {question_id: {question, options, answer}}}, .json or .json.gz"
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


def questions(bench: dict[str, dict[str, Any]]) -> list[BenchItem]:
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
        n = whole_number(left, "Questions per dataset", "bench.n", 4, minimum=1)
        seed = whole_number(
            right,
            "Seed",
            "bench.seed",
            0,
            help="The same seed draws the same questions; a larger N extends a smaller one",
        )
        return select(bench, datasets=datasets, sample=n, seed=seed)
    if pick == PICKS[1]:
        default = SHARED / "dev_ids.json"
        typed = _path_input("Ids file", "bench.ids", default, "{dataset: [question_id, ...]}")
        limit = whole_number(
            st,
            "At most this many per dataset (0: all)",
            "bench.limit",
            0,
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
        return select(bench, ids, [d for d in datasets if d in ids] or datasets, limit or None)
    return select(bench, datasets=datasets)
