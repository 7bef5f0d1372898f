"""Settings: the model endpoint, the embedded model, model prices, the corpora and each method's default knobs.

They are this browser session's settings (``st.session_state``); API keys are never shown or saved (see
``ui.settings.endpoint``).
"""

from __future__ import annotations

import streamlit as st

from core.engine.llm import embedded
from core.engine.llm.model_start import JOB_ID, ModelStart
from ui.common import jobs, keys, state
from ui.common.chrome import header
from ui.common.corpora import corpora_section
from ui.common.knobs import check_knobs, knob_inputs, method_picker
from ui.runs.launch import embedded_server
from ui.settings.endpoint import endpoint_section
from ui.settings.named_corpora import named_corpora_section
from ui.settings.prices import prices_section
from ui.settings.server_info import benchmark_section, server_section


def model_section() -> None:
    path = embedded.model_path()
    stamp = path.with_suffix(".verified")
    assembled = path.is_file()
    verified = assembled and stamp.is_file() and stamp.read_text().strip() == embedded.MODEL_SHA256
    server = embedded_server()
    st.markdown(
        f"**{embedded.MODEL_NAME}** · {embedded.MODEL_BYTES / 2**30:.2f} GiB · "
        f"{embedded.SLOT_CONTEXT:,} tokens of context per call"
    )
    st.markdown(
        " ".join(
            [
                ":green-badge[assembled]" if assembled else ":orange-badge[not assembled]",
                ":green-badge[sha256 verified]" if verified else ":orange-badge[not verified]",
                ":green-badge[server running]" if server else ":gray-badge[server not started]",
            ]
        )
    )
    st.caption(
        f"File: {path}"
        + (
            f" · serving at {server.base_url} (loaded in {server.load_seconds:.0f} s)"
            if server
            else " · it starts with the first run, or now:"
        )
    )
    if server is None:
        _model_start()
    server_section()


def _model_start() -> None:
    """Start the model as a job of the server's runner and follow it; a start going when the page opened (a reload,
    another tab, a first run on Ask) is followed the same way."""
    if jobs.model_starting() is not None:
        st.fragment(_follow_start, run_every=1)()
        return
    last = jobs.runner().get(JOB_ID, ModelStart)
    if last is not None and last.error:
        st.error(f"The embedded model could not start: {last.error}")
    if st.button("Start the embedded model", icon=":material/memory:", key="settings.start"):
        jobs.model_start()
        st.rerun()


def _follow_start() -> None:
    job = jobs.model_starting()
    if job is None:
        st.rerun()  # ended: the whole section redraws with the server running, or with why it did not start
    now = job.summary()
    st.progress(now.fraction or 0.0, text=f"Starting the embedded model · {now.text}")
    st.caption(
        "The model's start cannot be stopped midway: llama.cpp loads it in one call. It goes on if you leave this "
        "page; History › Running now lists it."
    )


def defaults_section() -> None:
    st.caption(
        "Each method starts from its paper's defaults; what you change here becomes the starting point "
        "on Ask and Compare for this session."
    )
    spec = method_picker("settings.method", label="Method")
    saved = state.knob_defaults(spec.name)
    values = knob_inputs(spec, key=keys.SETTINGS_KNOBS, defaults=saved, keep=False)  # saved as defaults instead
    checked, problem = check_knobs(spec, values)
    if problem:
        st.error(problem)
        return
    paper = spec.params().model_dump()
    changed = {k: v for k, v in checked.model_dump().items() if v != paper[k]}
    st.session_state.setdefault(keys.KNOB_DEFAULTS, {})[spec.name] = changed
    if changed:
        st.markdown("Changed from the paper: " + ", ".join(f"`{k}={v}`" for k, v in changed.items()))
        st.button("Back to the paper's defaults", key="settings.reset", on_click=_reset, args=(spec.name,))
    else:
        st.caption("All knobs are at the paper's defaults.")


def _reset(method: str) -> None:
    st.session_state[keys.KNOB_DEFAULTS].pop(method, None)
    for key in [k for k in st.session_state if str(k).startswith(keys.knob_widgets_of(keys.SETTINGS_KNOBS, method))]:
        del st.session_state[key]


def page() -> None:
    header("Settings", "Where answers come from, what the methods read, and how they start.")
    model, money, corpora, knobs = st.tabs(["Model", "Model prices", "Corpora", "Method defaults"])
    with model:
        left, right = st.columns(2, gap="large")
        with left:
            st.subheader("Endpoint")
            endpoint_section()
        with right:
            st.subheader("Embedded model")
            model_section()
        benchmark_section()
    with money:
        prices_section()
    with corpora:
        corpora_section()
        named_corpora_section()
    with knobs:
        defaults_section()
