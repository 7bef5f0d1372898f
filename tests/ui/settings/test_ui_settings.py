"""The Settings page: the endpoint (key never shown), a connection test, the embedded model's status, knob defaults."""

from __future__ import annotations

import socket
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.fakes import ScriptedLLM
from ui.common.keys import CORPORA, ENDPOINT, KNOB_DEFAULTS, LLM_OVERRIDE, SESSION_KEY

SECRET = "sk-test-do-not-show-123"


def settings_page(llm=None) -> AppTest:
    at = AppTest.from_string("from ui.settings.page import page\npage()", default_timeout=30)
    if llm is not None:
        at.session_state[LLM_OVERRIDE] = llm
    return at.run()


def everything_shown(at: AppTest) -> str:
    parts = [
        e.value for kind in ("markdown", "caption", "info", "warning", "error", "success") for e in getattr(at, kind)
    ]
    parts += [str(w.value) for w in at.text_input] + [str(w.value) for w in at.number_input]
    return "\n".join(parts)


def test_the_api_key_is_used_but_never_shown(monkeypatch):
    monkeypatch.setenv("MEDRAG_API_KEY", SECRET)
    monkeypatch.setenv("MEDRAG_BASE_URL", "http://localhost:8000/v1")
    monkeypatch.setenv("MEDRAG_MODEL", "served-model")
    at = settings_page()
    assert at.radio(key="settings.mode").value == "OpenAI-compatible endpoint"
    assert at.text_input(key="settings.base_url").value == "http://localhost:8000/v1"
    shown = everything_shown(at)
    assert ":green-badge[API key set] the server's `MEDRAG_API_KEY` from the environment" in shown
    assert SECRET not in shown
    endpoint = at.session_state[ENDPOINT]
    assert SECRET not in repr(endpoint)  # the session keeps no copy of the key either


def test_the_endpoints_context_window_comes_from_the_environment_and_the_page(monkeypatch):
    monkeypatch.setenv("MEDRAG_BASE_URL", "http://localhost:8000/v1")
    monkeypatch.setenv("MEDRAG_CONTEXT_WINDOW", "32768")
    at = settings_page()
    assert at.number_input(key="settings.context_window").value == 32768
    at.number_input(key="settings.context_window").set_value(131072).run()
    assert not at.exception
    assert at.session_state[ENDPOINT]["context_window"] == 131072

    def window():
        import streamlit as st

        from ui.common import state

        st.write(f"window {state.llm().context_window}")

    probe = AppTest.from_function(window, default_timeout=30)
    probe.session_state[ENDPOINT] = at.session_state[ENDPOINT]
    assert "window 131072" in probe.run().markdown[0].value  # what the agents' reading budgets are sized by


def test_without_a_key_the_page_asks_for_one_and_says_where_to_get_it():
    at = settings_page()
    at.radio(key="settings.mode").set_value("OpenAI-compatible endpoint").run()
    assert "Type the endpoint's base URL" in at.warning[0].value
    at.selectbox(key="settings.provider").set_value("anthropic").run()
    assert at.text_input(key="settings.base_url").value == "https://api.anthropic.com/v1"  # the provider's preset
    assert at.text_input(key=SESSION_KEY).value == ""  # a password field for this session's own key
    assert (
        "Anthropic (OpenAI layer) needs one ([get one](https://console.anthropic.com/settings/keys))"
        in everything_shown(at)
    )
    assert ":blue-badge[schema in the prompt only]" in everything_shown(at)  # what the family accepts


def test_connection_test_reports_success_and_an_unreachable_endpoint(monkeypatch):
    at = settings_page(ScriptedLLM().enqueue({"ready": "yes", "model": "scripted"}))
    at.button(key="settings.test").click().run()
    assert "answered a structured reply (strict json_schema)" in at.success[0].value

    monkeypatch.setenv("MEDRAG_MAX_RETRIES", "0")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    at = settings_page()
    at.radio(key="settings.mode").set_value("OpenAI-compatible endpoint").run()
    at.text_input(key="settings.base_url").input(f"http://127.0.0.1:{port}/v1").run()
    at.button(key="settings.test").click().run()
    assert not at.exception
    assert f"could not reach the LLM endpoint at http://127.0.0.1:{port}/v1" in at.error[0].value


def test_embedded_model_status_is_shown_without_starting_it():
    at = settings_page()
    shown = everything_shown(at)
    assert "qwen2.5-coder-1.5b-instruct-q4_k_m" in shown
    assert "server not started" in shown or "server running" in shown
    assert "assembled" in shown


def test_knob_defaults_are_kept_for_ask_and_compare_and_can_be_reset():
    at = settings_page()
    at.number_input(key="settings.knobs.cot.max_tokens").set_value(128).run()
    assert at.session_state[KNOB_DEFAULTS] == {"cot": {"max_tokens": 128}}
    assert "Changed from the paper: `max_tokens=128`" in everything_shown(at)
    at.button(key="settings.reset").click().run()
    assert at.session_state[KNOB_DEFAULTS] == {"cot": {}}
    assert at.number_input(key="settings.knobs.cot.max_tokens").value is None  # back to "the backend's"


def test_corpora_are_listed_limited_and_added_by_path(tmp_path):
    at = settings_page()
    boxes = {c.label.split(" · ")[0]: c for c in at.checkbox}
    assert {"**hpo**", "**teaching_pack**"} <= set(boxes) and all(c.value for c in boxes.values())
    assert at.session_state[CORPORA] is None  # untouched: the default corpus
    boxes["**hpo**"].uncheck().run()
    assert [Path(p).name for p in at.session_state[CORPORA]] == ["teaching_pack"]

    at.text_input(key="settings.new_corpus").input(str(tmp_path / "missing")).run()
    assert "no such corpus file or folder" in at.error[0].value and "missing" in at.error[0].value
    mine = tmp_path / "mine.jsonl"
    mine.write_text('{"id": "m1", "title": "T", "content": "Some text.", "contents": "T. Some text."}\n')
    at.text_input(key="settings.new_corpus").input(str(mine)).run()
    assert not at.error
    assert any(c.label.startswith("**mine** · 1 snippets · not built") for c in at.checkbox)
    assert [Path(p).name for p in at.session_state[CORPORA]] == ["teaching_pack", "mine.jsonl"]
    table = next(d.value for d in at.dataframe if "corpus" in d.value.columns).set_index("corpus")
    assert list(table.columns) == [
        "snippets",
        "chunked",
        "corpus MB",
        "index MB",
        "built in",
        "vectors",
        "licence",
        "path",
    ]  # the index status is on each corpus's line, the long path last
    assert table.loc["mine", "snippets"] == 1 and table.loc["mine", "path"] == str(mine)
    assert table.loc["mine", ["chunked", "index MB", "built in"]].isna().all()


def test_a_typed_base_url_whose_port_is_not_one_is_said_not_raised(monkeypatch):
    monkeypatch.setenv("MEDRAG_BASE_URL", "http://10.0.0.5:8000/v1")
    monkeypatch.setenv("MEDRAG_API_KEY", SECRET)  # so the typed URL is matched against the configured one
    at = settings_page()
    at.text_input(key="settings.base_url").input("http://10.0.0.5:\uff18\uff10\uff10\uff10/v1").run()
    assert not at.exception  # key matching raised a bare ValueError from urllib
    assert "This base URL has a port that is not a number from 1 to 65535 ('８０００')" in everything_shown(at)
