"""Settings: the model endpoint, the embedded model, the corpora and each method's default knobs.

They are this browser session's settings (``st.session_state``); API keys are only ever read from
Streamlit secrets or the environment, and never shown.
"""

from __future__ import annotations

import time

import streamlit as st

from core.llm import LLMError, embedded
from core.methods.base import ASSUMED_WINDOW
from ui import state
from ui.chrome import header
from ui.corpora import corpora_section
from ui.knobs import check_knobs, knob_inputs, method_picker
from ui.launch import embedded_server, ensure_model, start_model
from ui.server_info import benchmark_section, server_section

MODES = ("Embedded model (offline)", "OpenAI-compatible endpoint")


def _test_connection() -> None:
    if not ensure_model():
        return
    llm = state.probe_llm()
    started = time.perf_counter()
    try:
        reply = llm.complete([{"role": "user", "content": "Reply with the single word: ready"}], max_tokens=4)
    except LLMError as exc:
        st.error(f"The model did not answer: {exc}")
        return
    st.success(f"{llm.model_name} answered {reply.text.strip()!r} in {time.perf_counter() - started:.1f} s.")


def endpoint_section() -> None:
    chosen = state.endpoint_settings()
    mode = st.radio("Which model answers", MODES, index=0 if chosen["embedded"] else 1, key="settings.mode",
                    horizontal=True)
    chosen["embedded"] = mode == MODES[0]
    if not chosen["embedded"]:
        chosen["base_url"] = st.text_input("Base URL", value=chosen["base_url"], key="settings.base_url",
                                           placeholder="http://localhost:8000/v1",
                                           help="Any OpenAI-compatible server: OpenAI, vLLM, Ollama, llama.cpp")
        chosen["model"] = st.text_input("Model", value=chosen["model"], key="settings.model",
                                        placeholder="e.g. gpt-4o-mini or the name your server serves")
        source = state.api_key_source()
        if source:
            st.markdown(f":green-badge[API key set] read from {source}; it is never shown or saved.")
        else:
            st.markdown(":gray-badge[no API key] Put `MEDRAG_API_KEY` in `.streamlit/secrets.toml` or the "
                        "environment if your endpoint needs one; a local server usually does not.")
        chosen["context_window"] = st.number_input(
            "Context window (tokens)", min_value=0, max_value=2_000_000, step=1024,
            value=int(chosen.get("context_window") or 0), key="settings.context_window",
            help="What one call to this model can hold, prompt and reply. Each agent reads as many retrieved "
                 "snippets as fit (MedRAG's k=32 on a large window, as the toolkit does). 0 = not known: read as "
                 f"{ASSUMED_WINDOW:,}, the window of the toolkit's GPT-3.5-16k.")
        if not chosen["base_url"].strip():
            st.warning("Type the endpoint's base URL; until then the embedded model answers.")
    chosen["timeout"] = st.number_input("Timeout per call (seconds)", min_value=5.0, max_value=3600.0, step=5.0,
                                        value=float(chosen["timeout"]), key="settings.timeout")
    if st.button("Test the connection", icon=":material/wifi_tethering:", key="settings.test"):
        _test_connection()


def model_section() -> None:
    path = embedded.model_path()
    stamp = path.with_suffix(".verified")
    assembled = path.is_file()
    verified = assembled and stamp.is_file() and stamp.read_text().strip() == embedded.MODEL_SHA256
    server = embedded_server()
    st.markdown(f"**{embedded.MODEL_NAME}** · {embedded.MODEL_BYTES / 2**30:.2f} GiB · "
                f"{embedded.SLOT_CONTEXT:,} tokens of context per call")
    st.markdown(" ".join([
        ":green-badge[assembled]" if assembled else ":orange-badge[not assembled]",
        ":green-badge[sha256 verified]" if verified else ":orange-badge[not verified]",
        ":green-badge[server running]" if server else ":gray-badge[server not started]",
    ]))
    st.caption(f"File: {path}" + (f" · serving at {server.base_url} (loaded in {server.load_seconds:.0f} s)"
                                  if server else " · it starts with the first run, or now:"))
    if server is None and st.button("Start the embedded model", icon=":material/memory:", key="settings.start"):
        if start_model():
            st.rerun()
    server_section()


def defaults_section() -> None:
    st.caption("Each method starts from its paper's defaults; what you change here becomes the starting point "
               "on Ask and Compare for this session.")
    spec = method_picker("settings.method", label="Method")
    saved = state.knob_defaults(spec.name)
    values = knob_inputs(spec, key="settings.knobs", defaults=saved, keep=False)  # saved as defaults instead
    checked, problem = check_knobs(spec, values)
    if problem:
        st.error(problem)
        return
    paper = spec.params().model_dump()
    changed = {k: v for k, v in checked.model_dump().items() if v != paper[k]}
    st.session_state.setdefault(state.KNOB_DEFAULTS, {})[spec.name] = changed
    if changed:
        st.markdown("Changed from the paper: " + ", ".join(f"`{k}={v}`" for k, v in changed.items()))
        st.button("Back to the paper's defaults", key="settings.reset", on_click=_reset, args=(spec.name,))
    else:
        st.caption("All knobs are at the paper's defaults.")


def _reset(method: str) -> None:
    st.session_state[state.KNOB_DEFAULTS].pop(method, None)
    for key in [k for k in st.session_state if str(k).startswith(f"settings.knobs.{method}.")]:
        del st.session_state[key]


def page() -> None:
    header("Settings", "Where answers come from, what the methods read, and how they start.")
    model, corpora, knobs = st.tabs(["Model", "Corpora", "Method defaults"])
    with model:
        left, right = st.columns(2, gap="large")
        with left:
            st.subheader("Endpoint")
            endpoint_section()
        with right:
            st.subheader("Embedded model")
            model_section()
        benchmark_section()
    with corpora:
        corpora_section()
    with knobs:
        defaults_section()
