"""Settings › Model › Endpoint: which model answers, picked the way a clinician would pick it (a provider, its base
URL, a model from its list), what that backend accepts, and a check that asks what the methods ask.

Keys are never shown or saved: the server's own key is used only for the endpoint it was configured for, and a key
typed here for another endpoint lives in this browser session's memory alone.
"""

from __future__ import annotations

import streamlit as st

from core.engine.llm import LLMError, profiles
from core.engine.llm.check import check
from core.engine.llm.endpoint import ConfigError
from core.engine.llm.ladder import MODE_NAMES
from core.engine.llm.profiles import Profile
from core.engine.settings import ASSUMED_WINDOW, address_problem
from ui.common import keys, state
from ui.runs.launch import ensure_model

MODES = ("Embedded model (offline)", "OpenAI-compatible endpoint")
AUTO = ""  # the provider picker's "detect from the URL"
CHOICES = [AUTO, *(name for name in profiles.PROFILES if name != "embedded")]
EFFORTS = [None, "low", "medium", "high"]


def _provider_label(name: str) -> str:
    return "Detect from the URL" if name == AUTO else profiles.PROFILES[name].label


def _preset_url() -> None:
    """A provider picked: its usual base URL, unless the user typed one of their own."""
    chosen = state.endpoint_settings()
    profile = profiles.PROFILES.get(st.session_state[keys.PROVIDER])
    typed = chosen["base_url"].strip()
    presets = {p.example_url for p in profiles.PROFILES.values()}
    if profile is not None and profile.example_url and (not typed or typed in presets):
        chosen["base_url"] = st.session_state[keys.BASE_URL] = profile.example_url


def describe(profile: Profile, window: int | None) -> str:
    """What the backend accepts, in one line of badges."""
    taken = ", ".join(sorted(profile.sampling)) or "no sampling fields"
    parts = [f":blue-badge[{MODE_NAMES[profile.dialect]}]", f"`{profile.token_field}`", f"takes {taken}"]
    if profile.reasoning:
        parts.append(":violet-badge[reasoning model]")
    parts.append(f"window {window:,} tokens" if window else f"window not known (read as {ASSUMED_WINDOW:,})")
    parts.append("compact reply lengths" if profile.lengths == "compact" else "the papers' reply lengths")
    return " · ".join(parts)


def _key_line(chosen: dict) -> None:
    base_url = chosen["base_url"].strip() or None
    configured = state.server_key_for(base_url, chosen["model"].strip(), chosen.get("provider") or None)
    if configured:
        st.markdown(
            f":green-badge[API key set] the server's `{configured[1]}` from {state.key_source(configured[1])} "
            "is used for this endpoint only; it is never shown or saved."
        )
        return
    st.text_input(
        "API key for this endpoint",
        type="password",
        key=keys.SESSION_KEY,
        help="Kept in this browser session's memory only: never saved, logged or shown. A key the server "
        "was configured with goes only to the endpoint it was configured for.",
    )
    if not st.session_state.get(keys.SESSION_KEY):
        profile = profiles.resolve(base_url, chosen["model"], chosen.get("provider") or None)
        where = f" ([get one]({profile.key_url}))" if profile.key_url else ""
        st.caption(
            f":gray-badge[no API key] {profile.label} needs one{where}."
            if profile.needs_key
            else ":gray-badge[no API key] a local server usually needs none."
        )


def _model_input(chosen: dict) -> None:
    listed = st.session_state.get(keys.LISTED_MODELS, {}).get(chosen["base_url"].strip(), [])
    if listed:
        current = chosen["model"] if chosen["model"] in listed else listed[0]
        chosen["model"] = st.selectbox(
            "Model",
            listed,
            index=listed.index(current),
            key="settings.model_pick",
            help="The models this endpoint lists",
        )
    else:
        chosen["model"] = st.text_input(
            "Model",
            value=chosen["model"],
            key="settings.model",
            placeholder="e.g. gpt-4o-mini, or the name your server serves",
        )
    if st.button(
        "List the endpoint's models",
        icon=":material/list:",
        key="settings.list_models",
        disabled=not chosen["base_url"].strip(),
    ):
        try:
            names = state.probe_llm().models()
        except (LLMError, ConfigError) as exc:
            st.error(f"{exc}")
        else:
            st.session_state.setdefault(keys.LISTED_MODELS, {})[chosen["base_url"].strip()] = names
            st.rerun() if names else st.warning("The endpoint lists no models; type the model's name.")
    if not chosen["model"].strip():
        st.warning("Type or pick the model's name: the endpoint needs it with every call.")


def _endpoint_fields(chosen: dict) -> None:
    chosen["provider"] = st.selectbox(
        "Provider",
        CHOICES,
        format_func=_provider_label,
        key=keys.PROVIDER,
        index=CHOICES.index(chosen.get("provider") or AUTO),
        on_change=_preset_url,
        help="What the backend accepts (reply formats, sampling fields, token limits) "
        "comes from its family; detected from the URL unless you pick one.",
    )
    chosen["base_url"] = st.text_input(
        "Base URL",
        value=chosen["base_url"],
        key=keys.BASE_URL,
        placeholder="http://localhost:8000/v1",
        help="Any OpenAI-compatible server: OpenAI, Azure, Anthropic's and Gemini's "
        "OpenAI layers, Groq, DeepSeek, OpenRouter, vLLM, Ollama, LM Studio",
    )
    if not chosen["base_url"].strip():
        st.warning("Type the endpoint's base URL; until then the embedded model answers.")
        return
    if (typed := chosen["base_url"].strip()).startswith(("http://", "https://")) and (
        problem := address_problem(typed)
    ):
        st.error(f"This base URL {problem}; calls cannot reach it.")
    _model_input(chosen)
    _key_line(chosen)
    endpoint = state.endpoint()
    if endpoint.problem:
        st.error(f"This endpoint cannot be used as it is: {endpoint.problem}.")
    profile = endpoint.profile
    default = profile.context_window or 0
    chosen["context_window"] = st.number_input(
        "Context window (tokens)",
        min_value=0,
        max_value=2_000_000,
        step=1024,
        value=int(chosen.get("context_window") or 0),
        key="settings.context_window",
        help="What one call to this model can hold, prompt and reply. Each agent reads as many retrieved "
        "snippets as fit (MedRAG's k=32 on a large window, as the toolkit does). 0 = the family's "
        f"({default:,})"
        if default
        else "What one call to this model can hold, prompt and reply. 0 = not "
        f"known: read as {ASSUMED_WINDOW:,}, the window of the toolkit's GPT-3.5-16k.",
    )
    if profile.reasoning_effort:
        chosen["reasoning_effort"] = st.selectbox(
            "Reasoning effort",
            EFFORTS,
            index=EFFORTS.index(chosen.get("reasoning_effort")),
            format_func=lambda e: "the server's default" if e is None else e,
            key="settings.effort",
            help="For reasoning models only: how long they think before answering (more effort, more tokens).",
        )
    st.markdown(describe(profile, state.llm().context_window if chosen["context_window"] else default))
    if profile.doc:
        st.caption(f"{profile.label}: [what it accepts]({profile.doc})")


def _test_connection() -> None:
    if not ensure_model():
        return
    llm = state.probe_llm()
    try:
        checked = check(llm)
    except (LLMError, ConfigError) as exc:
        st.error(f"The model did not give a structured reply: {exc}")
        return
    st.success(
        f"{llm.model_name} answered a structured reply ({checked.mode}) in {checked.seconds:.1f} s"
        + (f", calling itself {checked.said!r}" if checked.said else "")
        + "."
    )
    for note in checked.notes:
        st.info(note)


def endpoint_section() -> None:
    chosen = state.endpoint_settings()
    mode = st.radio(
        "Which model answers", MODES, index=0 if chosen["embedded"] else 1, key="settings.mode", horizontal=True
    )
    chosen["embedded"] = mode == MODES[0]
    if not chosen["embedded"]:
        _endpoint_fields(chosen)
    chosen["timeout"] = st.number_input(
        "Timeout per call (seconds)",
        min_value=5.0,
        max_value=3600.0,
        step=5.0,
        value=float(chosen["timeout"]),
        key="settings.timeout",
        help="The most one model call may take, end to end: reading its prompt, retries and writing its reply. "
        "A call still going at that point fails, and its run ends with the error.",
    )
    if st.button(
        "Test the connection",
        icon=":material/wifi_tethering:",
        key="settings.test",
        help="One small structured call, as the methods make: says which reply format worked, or exactly "
        "what the server refused",
    ):
        _test_connection()
