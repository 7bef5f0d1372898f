"""Settings › Corpora offers the papers' corpora by name: what one takes is said before anything is fetched, then
it is downloaded from the Hub (here ``tests/hub_server.py`` on 127.0.0.1, through the real client) and indexed as an
index-build job, and joins the corpus list checked."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.test_corpora_hub import hub  # noqa: F401 - the fixture: the Hub serving MedRAG/textbooks
from tests.ui.settings.test_ui_settings_jobs import shown, until
from ui.common import state
from ui.common.jobs import runner

SECTION = (
    "from ui.common.corpora import corpora_section\nfrom ui.settings.named_corpora import named_corpora_section\n"
    "corpora_section()\nnamed_corpora_section()"
)


@pytest.fixture(autouse=True)
def fresh_runner():
    runner.clear()
    state.retriever_pool.clear()
    yield
    runner.clear()
    state.retriever_pool.clear()


def check(name: str) -> AppTest:
    at = AppTest.from_string(SECTION, default_timeout=30).run()
    at.selectbox(key="settings.named_corpus").select(name).run()
    return at.button(key="settings.named_check").click().run()


def test_checking_says_the_size_and_fetches_nothing(hub):  # noqa: F811
    at = check("textbooks")
    said = at.code[0].value
    assert "download: 3 files" in said and "(assumed)" in said and "where: in-process index" in said
    assert not at.button(key="settings.named_get").disabled
    assert not [path for method, path, _ in hub.log if method == "GET" and "/resolve/" in path]


def test_statpearls_shows_the_steps_and_no_download(hub):  # noqa: F811
    at = check("statpearls")
    assert "statpearls_NBK430685.tar.gz" in at.code[0].value
    assert at.button(key="settings.named_get").disabled


def test_a_corpus_got_here_joins_the_list_checked(hub):  # noqa: F811
    """Heavy (the real embedder indexes the 12 snippets): run under ``flock /tmp/medrag-heavy.lock``."""
    at = check("textbooks")
    at.button(key="settings.named_get").click().run()
    until(at, lambda a: any(box.label.startswith("**textbooks**") for box in a.checkbox), "textbooks listed", 300)
    box = next(box for box in at.checkbox if box.label.startswith("**textbooks**"))
    assert box.value and "12 snippets" in box.label and "built" in box.label
    assert "Ready: textbooks." in shown(at) or not at.get("progress")
