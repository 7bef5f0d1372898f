"""The default corpus index built in the background: its states and progress, the sidebar that follows it,
and the clear refusal a method that needs the corpus gets meanwhile."""

from __future__ import annotations

import threading

from streamlit.testing.v1 import AppTest

from core.engine.retrieval.background import BackgroundBuild
from tests.waiting import patience, wait_until


def blocking_build(
    release: threading.Event, fail: bool = False, step: tuple[str, int, int] = ("embed hpo", 4_096, 16_384)
) -> BackgroundBuild:
    def work(progress):
        progress(*step)
        release.wait(patience())
        if fail:
            raise RuntimeError("disk full")
        return "retriever"

    build = BackgroundBuild(work).start()
    wait_until(lambda: build.status().stage or build.status().state != "building", "the build's first stage")
    return build


def test_a_build_reports_its_stage_then_its_result():
    release = threading.Event()
    build = blocking_build(release)
    status = build.status()
    assert status.state == "building" and status.fraction == 0.25
    assert "embed hpo: 4,096 of 16,384 (25%)" in status.describe()
    release.set()
    assert build.until_done(patience()) and build.status().state == "ready" and build.result == "retriever"
    assert build.status().describe().startswith("ready")


def test_a_failed_build_says_why_and_raises_nothing():
    release = threading.Event()
    release.set()
    build = blocking_build(release, fail=True)
    assert build.until_done(patience())
    status = build.status()
    assert status.state == "failed" and status.error == "disk full"
    assert "failed" in status.describe() and "disk full" in status.describe()


SCRIPT = """
import streamlit as st
from core.engine.methods import get
from ui.common import index_status
index_status.sidebar()
st.session_state["medrag"] = index_status.corpus_not_ready(get("medrag"))
st.session_state["cot"] = index_status.corpus_not_ready(get("cot"))
"""


def test_the_sidebar_shows_progress_and_corpus_methods_wait(monkeypatch):
    from ui.common import index_status

    release = threading.Event()
    build = blocking_build(release)
    monkeypatch.setenv("MEDRAG_BACKGROUND_INDEX", "1")
    monkeypatch.setattr(index_status, "_build", lambda: build)
    at = AppTest.from_string(SCRIPT, default_timeout=10).run()
    assert not at.exception
    assert "Building the default corpus index" in at.sidebar.get("progress")[0].proto.text
    assert "still being built" in at.session_state["medrag"] and at.session_state["cot"] is None
    release.set()
    build.until_done(patience())
    at.run()
    assert at.session_state["medrag"] is None
    assert "index ready" in at.sidebar.caption[0].value


def test_loading_a_built_index_makes_runs_wait_instead_of_refusing(monkeypatch):
    from ui.common import index_status

    release = threading.Event()
    loading = BackgroundBuild(lambda progress: release.wait(patience())).start()  # no build stage: only loading
    monkeypatch.setenv("MEDRAG_BACKGROUND_INDEX", "1")
    monkeypatch.setattr(index_status, "_build", lambda: loading)
    at = AppTest.from_string(SCRIPT, default_timeout=10).run()
    release.set()
    assert not at.exception and at.session_state["medrag"] is None


def test_opening_a_built_index_says_opening_not_building(monkeypatch):
    from ui.common import index_status

    release = threading.Event()
    opening = blocking_build(release, step=("load medquad", 0, 1))
    assert opening.status().only_opening and opening.status().describe().startswith("load medquad, ")
    monkeypatch.setenv("MEDRAG_BACKGROUND_INDEX", "1")
    monkeypatch.setattr(index_status, "_build", lambda: opening)
    at = AppTest.from_string(SCRIPT, default_timeout=10).run()
    release.set()
    text = at.sidebar.get("progress")[0].proto.text
    assert not at.exception and text.startswith("Opening the default corpus index · load medquad")
    assert "Building" not in text and at.session_state["medrag"] is None


def test_turned_off_the_app_opens_the_corpus_when_a_run_needs_it():
    at = AppTest.from_string(SCRIPT, default_timeout=10).run()  # the test suite turns the background build off
    assert not at.exception and at.session_state["medrag"] is None and not at.sidebar.get("progress")


def test_history_lists_the_build_while_it_runs_and_offers_no_stop(monkeypatch):
    from ui.common import index_status
    from ui.common.jobs import runner

    release = threading.Event()

    class Pool:  # the default corpus, building until released
        def get(self, corpus, progress):
            progress("embed hpo", 4_096, 16_384)
            release.wait(patience())

    monkeypatch.setenv("MEDRAG_BACKGROUND_INDEX", "1")
    monkeypatch.setattr("ui.common.state.retriever_pool", Pool)
    runner.clear()
    build = index_status._build()  # as the first page view starts it, in the server's job runner
    assert index_status._build() is build and runner().get(index_status.JOB) is build
    try:
        at = AppTest.from_string("from ui.history.page import page\npage()", default_timeout=10).run()
        line = next(m.value for m in at.markdown if ":gray-badge[index build]" in m.value)
        assert "**Default corpus index**" in line and "embed hpo" in line
        assert "No runs yet" in at.info[0].value  # listed even before any run exists
        assert not [b for b in at.button if b.key.startswith("history.stop")]  # a build cannot be stopped midway
    finally:
        release.set()
        build.until_done(patience())
        runner.clear()
