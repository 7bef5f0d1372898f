"""The app shell: every page registered, the not-for-clinical-use notice and the stylesheet on every page."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.ui.navigation_titles import navigation_titles

APP = str(Path(__file__).resolve().parents[2] / "streamlit_app.py")


def test_the_app_opens_on_ask_with_the_notice_and_styles():
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert not at.exception
    assert "For research and teaching, not for clinical use." in at.markdown[0].value
    assert at.title[0].value == "Ask"
    assert any(".snip.cited" in h.value for h in at.html)


def test_every_screen_is_in_the_navigation():
    # the root is a hidden page that sends the browser on to Ask, so /ask is a link like /history
    assert navigation_titles("SINGLE", "OWNER") == {
        "": ["MedRAG Studio"],
        "Run": ["Ask", "Compare", "Benchmark", "Workshop"],
        "Review": ["History", "Annotate"],
        "Setup": ["Settings"],
    }


def test_a_database_of_another_version_is_said_in_words_and_nothing_else_runs(monkeypatch, tmp_path):
    from tests.test_store_versions import other_version_db

    monkeypatch.setenv("MEDRAG_STUDIO_HOME", str(tmp_path))
    other_version_db(tmp_path / "studio.sqlite")
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert not at.exception
    assert "The studio database cannot be used" in at.error[0].value
    assert "written by another version of the studio" in at.error[0].value
    assert not at.title  # the page itself never started
