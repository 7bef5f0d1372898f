"""The server's API key goes only to the endpoint it was configured for: a URL a session types (a visitor's own
server, say) never receives it, from any page; a session brings its own key for another endpoint, kept in memory."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.engine.llm import profiles
from core.engine.llm.endpoint import Endpoint, server_key
from core.engine.settings import settings
from core.engine.store import RunStore
from tests.fake_endpoint import FakeEndpoint, streams
from tests.ui.explore.test_ui_ask import click_run, fill
from ui.common.keys import ENDPOINT, SESSION_KEY

SECRET = "sk-server-owned-0123456789"
VISITOR_KEY = "sk-visitor-own-key-987"


def test_a_key_is_bound_to_the_endpoint_it_was_configured_for():
    env = settings(
        MEDRAG_BASE_URL="http://10.0.0.5:8000/v1",
        MEDRAG_API_KEY=SECRET,
        OPENAI_API_KEY="sk-openai",
        ANTHROPIC_API_KEY="sk-ant",
    )
    generic, openai, anthropic = (profiles.PROFILES[n] for n in ("generic", "openai", "anthropic"))
    assert server_key("http://10.0.0.5:8000/v1/", generic, env) == (SECRET, "MEDRAG_API_KEY")
    assert server_key("http://evil.example:8000/v1", generic, env) is None
    assert server_key("http://10.0.0.5:8001/v1", generic, env) is None  # another port is another server
    for port in ("+8000", "\uff18\uff10\uff10\uff10"):  # typed in Settings: no bare ValueError from urllib
        assert server_key(f"http://10.0.0.5:{port}/v1", generic, env) is None
    assert server_key("https://api.openai.com/v1", openai, env) == ("sk-openai", "OPENAI_API_KEY")
    assert server_key("https://api.openai.com.evil.example/v1", openai, env) is None
    assert server_key("https://api.anthropic.com/v1", anthropic, env) == ("sk-ant", "ANTHROPIC_API_KEY")
    assert server_key("https://evil.example/v1", anthropic, env) is None  # picking a provider does not move its key
    assert SECRET not in repr(Endpoint.from_settings(env)) and SECRET not in repr(env)


def test_credentials_in_the_url_and_a_key_are_refused_by_name_not_silently_dropped():
    from core.engine.llm.endpoint import ConfigError

    with pytest.raises(ConfigError, match="MEDRAG_BASE_URL carries a user name and password and MEDRAG_API_KEY"):
        Endpoint.from_settings(settings(MEDRAG_BASE_URL="http://u:p@10.0.0.5/v1", MEDRAG_API_KEY=SECRET))
    assert "carries only one of them" in Endpoint(base_url="http://u:p@10.0.0.5/v1", api_key=SECRET).problem


@pytest.fixture
def servers():
    ours = FakeEndpoint(streams('{"ready": "yes", "model": "ours"}'), models=("ours-model",))
    theirs = FakeEndpoint(streams('{"ready": "yes", "model": "theirs"}'), models=("their-model",))
    yield ours, theirs
    ours.close()
    theirs.close()


def carried(server: FakeEndpoint, secret: str) -> bool:
    return any(secret in str(v) for h in server.headers for v in h.values()) or any(
        secret in str(r) for r in server.requests
    )


def auth(headers: dict[str, str]) -> str | None:
    return next((v for k, v in headers.items() if k.lower() == "authorization"), None)


def settings_at(url: str) -> AppTest:
    at = AppTest.from_string("from ui.settings.page import page\npage()", default_timeout=30).run()
    at.radio(key="settings.mode").set_value("OpenAI-compatible endpoint").run()
    at.text_input(key="settings.base_url").input(url).run()
    return at.text_input(key="settings.model").input("m").run()


def test_no_page_sends_the_servers_key_to_a_url_a_session_typed(servers, monkeypatch):
    ours, theirs = servers
    monkeypatch.setenv("MEDRAG_BASE_URL", ours.url)
    monkeypatch.setenv("MEDRAG_API_KEY", SECRET)
    monkeypatch.setenv("MEDRAG_MAX_RETRIES", "0")
    at = settings_at(theirs.url)
    at.button(key="settings.test").click().run()
    assert not at.exception and "answered a structured reply" in at.success[0].value
    at.button(key="settings.list_models").click().run()
    assert at.selectbox(key="settings.model_pick").options == ["their-model"]

    ask = AppTest.from_string("from ui.explore.page import page\npage()", default_timeout=60)
    ask.session_state[ENDPOINT] = dict(at.session_state[ENDPOINT])
    click_run(fill(ask.run(), "Which hormone lowers blood glucose?", ["Insulin", "Glucagon"]))
    assert theirs.requests and not carried(theirs, SECRET)  # every page's calls went there, without the key
    assert {auth(h) for h in theirs.headers} == {"Bearer not-needed"}  # a placeholder, never the server's key
    assert RunStore().list_runs() and SECRET not in RunStore().db.execute("select * from events").fetchall().__repr__()

    # the session's own key goes to its own endpoint, and is kept nowhere but in the session's memory
    at.text_input(key=SESSION_KEY).input(VISITOR_KEY).run()
    at.button(key="settings.test").click().run()
    assert auth(theirs.headers[-1]) == f"Bearer {VISITOR_KEY}"
    assert VISITOR_KEY not in repr(at.session_state[ENDPOINT])
    assert not carried(ours, VISITOR_KEY)

    # back at the server's own endpoint, the server's key is used there
    at.text_input(key="settings.base_url").input(ours.url).run()
    at.button(key="settings.test").click().run()
    assert auth(ours.headers[-1]) == f"Bearer {SECRET}"
    assert not carried(ours, VISITOR_KEY)
