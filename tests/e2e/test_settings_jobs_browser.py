"""Settings' long waits as jobs, in headless chromium on the real app: the embedded model's start and an index build
each start from their button, show progress and that they cannot be stopped midway, are found again after a reload,
and are listed in History's "Running now". Screenshots go to artifacts/screenshots/settings_jobs_*.png.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import MODEL_SECONDS, SHOTS, open_page, settle, snap

pytestmark = [pytest.mark.browser, pytest.mark.default_index, pytest.mark.model, pytest.mark.timeout(1200)]


def test_the_model_start_and_an_index_build_run_as_jobs_that_survive_a_reload(page, app):
    url = app[0]
    page.set_viewport_size({"width": 1440, "height": 1000})
    open_page(page, f"{url}/settings", "Settings")
    settle(page)  # a click during the page's first run can be lost
    page.get_by_role("button", name="Start the embedded model").click()
    starting = page.get_by_text("Starting the embedded model ·", exact=False)
    running = page.get_by_text("server running")
    expect(starting.or_(running)).to_be_visible(timeout=MODEL_SECONDS)  # it loads in seconds when assembled
    if starting.count():
        page.screenshot(path=str(SHOTS / "settings_jobs_model_starting_1440.png"))  # as it comes
        expect(page.get_by_text("The model's start cannot be stopped midway", exact=False)).to_be_visible()
    page.set_viewport_size({"width": 1024, "height": 1000})
    open_page(page, f"{url}/history", "History")  # another page while it loads
    listed = page.get_by_text("model start", exact=True)
    if listed.count():  # still loading: listed with no Stop
        expect(page.get_by_text("cannot be stopped midway").first).to_be_visible()
        snap(page, "settings_jobs_history_running_1024", 1024)
    open_page(page, f"{url}/settings", "Settings")  # a reload finds the start going, or done
    page.get_by_text("server running").wait_for(timeout=MODEL_SECONDS)
    snap(page, "settings_jobs_model_ready_1024", 1024)

    page.set_viewport_size({"width": 1440, "height": 1000})
    page.get_by_role("tab", name="Corpora").click()
    hpo = page.locator('[data-testid="stCheckbox"]', has_text="hpo")
    hpo.wait_for()
    hpo.click()  # the teaching pack alone keeps the build short
    settle(page)
    page.get_by_role("button", name="Build missing indexes and open the corpora").click()
    page.get_by_text("Ready: teaching_pack").wait_for(timeout=MODEL_SECONDS)
    expect(page.get_by_role("button", name="Corpora are open")).to_be_disabled()
    snap(page, "settings_jobs_corpora_ready_1440", 1440)
