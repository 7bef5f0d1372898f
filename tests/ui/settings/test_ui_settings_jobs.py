"""Settings' two long waits as jobs of the server's runner (``core/engine/jobs.py``): the embedded model's start and an
index build. Each starts from its button, shows its progress, is found again by a fresh session (a reload), is
listed in History's "Running now" as one that cannot be stopped midway, and says how it ended.

The model's start is a scripted ``EmbeddedServer.get`` (control flow: progress, a failure, a retry); the index build
is real, on a six-snippet corpus."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest

from core.engine.llm.embedded import EmbeddedServer, ModelAssemblyError
from tests.test_retrieval_index import CARDIO, write_corpus
from tests.waiting import patience, wait_until
from ui.common import state
from ui.common.jobs import runner
from ui.common.keys import CORPORA, CORPUS_PATHS

MODEL = "from ui.settings.page import model_section\nmodel_section()"
CORPORA_SECTION = "from ui.common.corpora import corpora_section\ncorpora_section()"
HISTORY = "from ui.history.page import page\npage()"


@pytest.fixture(autouse=True)
def fresh_runner():
    pool = state.retriever_pool  # the cached one, even where a test puts another in its place
    runner.clear()
    pool.clear()
    yield
    runner.clear()
    pool.clear()


def shown(at: AppTest) -> str:
    kinds = ("markdown", "caption", "error", "success", "warning")
    return "\n".join([e.value for kind in kinds for e in getattr(at, kind)] + [p.text for p in at.get("progress")])


def until(at: AppTest, done, what: str, seconds: float = 60) -> AppTest:
    """Runs the page again (as its polling fragment would) until ``done(at)``; a failure shows the page."""
    try:
        wait_until(lambda: done(at.run()), what, seconds, every=0.2)  # each look redraws the page
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the page shows:\n{shown(at)}") from None
    return at


class ScriptedStart:
    """``EmbeddedServer.get`` that reports assembling, then waits to be released and starts or fails."""

    def __init__(self, monkeypatch, fail: str | None = None):
        self.release, self.fail, self.calls = threading.Event(), fail, 0
        monkeypatch.setattr(EmbeddedServer, "_instance", None)
        monkeypatch.setattr(EmbeddedServer, "get", classmethod(lambda cls, progress=None: self.get(progress)))

    def get(self, progress):
        self.calls += 1
        progress(1 << 20, 4 << 20)
        assert self.release.wait(patience())
        if self.fail:
            raise ModelAssemblyError(self.fail)
        EmbeddedServer._instance = SimpleNamespace(base_url="http://127.0.0.1:1/v1", load_seconds=3.0, threads=set())
        return EmbeddedServer._instance


def test_the_model_starts_as_a_job_followed_after_a_reload_and_listed_in_history(monkeypatch):
    start = ScriptedStart(monkeypatch)
    at = AppTest.from_string(MODEL, default_timeout=10).run()
    at.button(key="settings.start").click().run()
    assert "Starting the embedded model · assembling and checking the model file: 1 of 4 MiB" in shown(at)
    assert "cannot be stopped midway" in shown(at) and not at.button  # no second start while this one goes
    reloaded = AppTest.from_string(MODEL, default_timeout=10).run()  # a new session finds the same start
    assert "assembling and checking the model file: 1 of 4 MiB" in shown(reloaded)
    history = AppTest.from_string(HISTORY, default_timeout=10).run()
    line = next(m.value for m in history.markdown if ":gray-badge[model start]" in m.value)
    assert "Embedded model" in line and "cannot be stopped midway" in shown(history)
    assert not [b for b in history.button if b.key.startswith("history.stop")]
    start.release.set()
    until(reloaded, lambda at: "server running" in shown(at), "the reloaded page to say the server runs")
    assert "serving at http://127.0.0.1:1/v1 (loaded in 3 s)" in shown(reloaded) and start.calls == 1


def test_a_failed_start_says_why_and_a_click_tries_again(monkeypatch):
    start = ScriptedStart(monkeypatch, fail="the model file is missing part 2")
    start.release.set()
    at = AppTest.from_string(MODEL, default_timeout=10).run()
    at.button(key="settings.start").click().run()
    until(at, lambda at: bool(at.error), "the failed start's error")
    assert at.error[0].value == "The embedded model could not start: the model file is missing part 2"
    start.fail = None
    at.button(key="settings.start").click().run()
    until(at, lambda at: "server running" in shown(at), "the page to say the server runs")
    assert start.calls == 2 and not at.error


def test_build_indexes_runs_as_a_job_with_progress_then_says_ready(tmp_path):
    corpus = tmp_path / "cardio.jsonl"
    write_corpus(corpus, CARDIO)
    at = AppTest.from_string(CORPORA_SECTION, default_timeout=60)
    at.session_state[CORPUS_PATHS] = [str(corpus)]
    at.session_state[CORPORA] = [str(corpus)]  # the six snippets alone
    at.run()
    at.button(key="settings.build").click().run()
    build = runner().get(f"index build: {corpus}")
    assert build is not None and build.kind == "index build"
    until(at, lambda at: bool(at.success), "the index build's success", seconds=120)
    assert at.success[0].value == "Ready: cardio." and not at.error
    assert at.button(key="settings.build").label == "Corpora are open" and at.button(key="settings.build").disabled
    assert "cardio** · 6 snippets" in "\n".join(c.label for c in at.checkbox)


def test_a_build_going_when_the_page_opens_is_followed_and_cannot_be_stopped(monkeypatch):
    release = threading.Event()

    class Pool:  # a build going in another session, until released
        def get(self, corpora, progress):
            progress("embed cardio", 2, 6)
            release.wait(patience())
            return SimpleNamespace(corpora=["cardio"])

        def is_open(self, corpora):
            return False

    monkeypatch.setattr(state, "retriever_pool", Pool)
    from ui.common import index_status

    index_status.index_build(("/data/cardio.jsonl",))
    at = AppTest.from_string(CORPORA_SECTION, default_timeout=30).run()
    assert "Indexes: cardio.jsonl · embed cardio" in shown(at)
    assert "An index build cannot be stopped midway" in shown(at)
    release.set()
    until(at, lambda at: bool(at.success), "the index build's success")
    assert at.success[0].value == "Ready: cardio."
