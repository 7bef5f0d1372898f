"""The real app driven in headless chromium on a scripted endpoint: Settings (the corpora, one index built), Compare
(CoT and MedRAG at once, both calls held in flight at the endpoint until the test has seen the retrieval drawn
while they run) and History. Screenshots go to artifacts/screenshots/, timings to
artifacts/screenshots/timings-test_browser.json. The same pages on the embedded model: ``test_model_browser.py``.

MedRAG reads 4 snippets within 1,000 characters from the teaching pack alone.
"""

from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import open_page, saved_runs, scripted_env, set_number, settle, snap
from tests.e2e.waits import ms, until
from tests.fake_endpoint import FakeEndpoint, Step

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]


def reply(request: dict) -> str:
    """CoT's reply, or MedRAG's (its schema asks for the snippets it cites)."""
    cites = "cited_ids" in json.dumps(request)
    return json.dumps(
        {"reasoning": "Inferior leads: the right coronary artery.", "answer": "B"}
        | ({"cited_ids": []} if cites else {})
    )


@pytest.fixture(scope="module")
def app_env(tmp_path_factory, gate):
    endpoint = FakeEndpoint(script=lambda request: Step(text=reply(request), gate=gate))
    yield scripted_env(endpoint, tmp_path_factory.mktemp("no-model"))
    gate.open()
    endpoint.close()


def test_settings_lists_the_corpora_and_limits_them(page, app, timings):
    app_url, _ = app
    open_page(page, f"{app_url}/settings", "Settings")
    snap(page, "04_settings_model")
    page.get_by_role("tab", name="Corpora").click()
    hpo = page.locator('[data-testid="stCheckbox"]', has_text="hpo")
    hpo.wait_for()
    expect(page.locator('[data-testid="stCheckbox"]', has_text="teaching_pack")).to_be_visible()
    hpo.click()  # the teaching pack alone keeps the index build short
    settle(page)
    started = time.perf_counter()
    page.get_by_role("button", name="Build missing indexes and open the corpora").click()
    page.get_by_text("Ready: teaching_pack").wait_for(timeout=ms("index"))
    timings["teaching_pack_open_s"] = round(time.perf_counter() - started, 1)
    expect(page.get_by_role("button", name="Corpora are open")).to_be_disabled()
    snap(page, "05_settings_corpora")


def test_compare_runs_two_methods_at_once(page, app, gate, timings):
    page.get_by_role("link", name="Compare").click()  # in-app navigation keeps this session's settings
    page.get_by_role("heading", name="Compare", level=1).wait_for()
    settle(page)
    page.get_by_label("Question").fill("ST elevation in II, III and aVF: which coronary artery is usually occluded?")
    page.get_by_label("Option A").fill("Left anterior descending artery")
    page.get_by_label("Option B").fill("Right coronary artery")
    page.get_by_label("Option B").press("Enter")
    settle(page)
    remove = page.get_by_role("button", name="×")
    for left in (3, 2):
        remove.nth(2).click()
        expect(remove).to_have_count(left)
        settle(page)
    expect(page.get_by_label("Option C")).to_have_count(0)
    expander = page.locator('[data-testid="stExpander"]', has_text="MedRAG knobs")
    expander.get_by_text("MedRAG knobs").click()
    for label, value in {"K": 4, "Max doc chars": 1000}.items():
        set_number(expander, label, value)
        settle(page)
    snap(page, "06_compare_ready")

    started = time.perf_counter()
    page.get_by_role("button", name="Run all").click()
    until(lambda: gate.held == 2, "CoT's and MedRAG's calls both held at the endpoint at once", "index")
    timings["compare_both_calls_in_flight_s"] = round(time.perf_counter() - started, 1)
    page.get_by_text("retrieved 4 snippets for").first.wait_for(state="attached")  # drawn while the runs go on
    expect(page.get_by_role("heading", name="Full traces")).to_have_count(0)
    snap(page, "07_compare_running")
    gate.open()
    page.get_by_role("heading", name="Full traces").wait_for()
    settle(page)
    expect(page.get_by_text("CoT: done in")).to_be_visible()
    expect(page.get_by_text("MedRAG: done in")).to_be_visible()
    expect(page.locator(".lane-head")).to_have_count(5)
    snap(page, "08_compare_done")
    _, home = app
    compared = saved_runs(home)[:2]
    assert {r.method for r in compared} == {"cot", "medrag"} and all(r.status == "ok" for r in compared)


def test_history_reopens_the_saved_runs(page, app):
    page.get_by_role("link", name="History").click()
    page.get_by_role("heading", name="History", level=1).wait_for()
    settle(page)
    expect(page.get_by_text("2 of 2 runs")).to_be_visible()  # the two compared runs
    snap(page, "09_history")
