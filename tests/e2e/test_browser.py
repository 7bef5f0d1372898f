"""The real app on the embedded model, driven in headless chromium: Ask (CoT on a teaching case), Settings
(corpora), Compare (CoT and MedRAG at once) and History. Screenshots go to artifacts/screenshots/, timings
to artifacts/screenshots/timings-test_browser.json.

Slow by nature (the model reads ~45 tokens/s on two cores), so budgets are small: every answer has at most
160 tokens, and MedRAG reads 4 snippets within 1,000 characters from the teaching pack alone.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import MODEL_SECONDS, open_page, pick, saved_runs, set_number, settle, snap

pytestmark = [pytest.mark.browser, pytest.mark.default_index, pytest.mark.timeout(1800)]

CASE = "Cardiology · Acute inferior ST-elevation myocardial infarction"


def test_ask_shows_the_run_live_then_its_trace(page, app, timings):
    app_url, home = app
    open_page(page, app_url, "Ask")
    expect(page.get_by_text("For research and teaching, not for clinical use.")).to_be_visible()
    pick(page, "Start from a teaching case", CASE)
    expect(page.get_by_label("Question")).to_have_value(re.compile("crushing central chest pain"))
    page.get_by_text("Knobs", exact=True).click()
    set_number(page, "Max tokens", 160)
    settle(page)
    snap(page, "01_ask_ready")

    started = time.perf_counter()
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("CoT: running").wait_for(timeout=MODEL_SECONDS)  # the live status, once the model is loaded
    timings["ask_running_shown_s"] = round(time.perf_counter() - started, 1)
    page.locator(".answer-line").wait_for(timeout=MODEL_SECONDS)
    timings["ask_total_s"] = round(time.perf_counter() - started, 1)
    settle(page)

    expect(page.get_by_text("CoT: done in")).to_be_visible()
    expect(page.locator('[data-testid="stChatMessage"]')).to_have_count(1)
    expect(page.get_by_text("Teaching pack answer")).to_be_visible()
    snap(page, "02_ask_trace")
    run = saved_runs(home)[0]
    assert run.status == "ok" and run.answer.choice in run.options
    timings["ask_run_first_event_s"] = round(run.events[0].time - run.started, 1)
    timings["ask_run_seconds"] = run.totals.seconds
    timings["ask_run_tokens"] = run.totals.tokens
    page.get_by_role("tab", name="Time and tokens").click()
    page.locator(".js-plotly-plot").first.wait_for()
    snap(page, "03_ask_time_and_tokens")


def test_settings_lists_the_corpora_and_limits_them(page, app, timings):
    app_url, _ = app
    open_page(page, f"{app_url}/settings", "Settings")
    expect(page.get_by_text("server running")).to_be_visible()  # started by the Ask run
    snap(page, "04_settings_model")
    page.get_by_role("tab", name="Corpora").click()
    hpo = page.locator('[data-testid="stCheckbox"]', has_text="hpo")
    hpo.wait_for()
    expect(page.locator('[data-testid="stCheckbox"]', has_text="teaching_pack")).to_be_visible()
    hpo.click()  # the teaching pack alone keeps the first index build short
    settle(page)
    started = time.perf_counter()
    page.get_by_role("button", name="Build missing indexes and open the corpora").click()
    page.get_by_text("Ready: teaching_pack").wait_for(timeout=MODEL_SECONDS)
    timings["teaching_pack_open_s"] = round(time.perf_counter() - started, 1)
    snap(page, "05_settings_corpora")


def test_compare_runs_two_methods_at_once(page, app, timings):
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
    for method, knobs in (("CoT", {"Max tokens": 160}), ("MedRAG", {"K": 4, "Max doc chars": 1000, "Max tokens": 160})):
        expander = page.locator('[data-testid="stExpander"]', has_text=f"{method} knobs")
        expander.get_by_text(f"{method} knobs").click()
        for label, value in knobs.items():
            set_number(expander, label, value)
            settle(page)
    snap(page, "06_compare_ready")

    started = time.perf_counter()
    page.get_by_role("button", name="Run all").click()
    page.get_by_text("retrieved 4 snippets for").first.wait_for(state="attached", timeout=MODEL_SECONDS)
    timings["compare_first_retrieval_s"] = round(time.perf_counter() - started, 1)
    live = page.get_by_text("Full traces").count() == 0  # the retrieval is shown before the runs end
    snap(page, "07_compare_running")
    page.get_by_role("heading", name="Full traces").wait_for(timeout=MODEL_SECONDS)
    timings["compare_total_s"] = round(time.perf_counter() - started, 1)
    settle(page)
    assert live
    expect(page.get_by_text("CoT: done in")).to_be_visible()
    expect(page.get_by_text("MedRAG: done in")).to_be_visible()
    expect(page.locator(".lane-head")).to_have_count(5)
    snap(page, "08_compare_done")
    _, home = app
    compared = saved_runs(home)[:2]
    assert {r.method for r in compared} == {"cot", "medrag"} and all(r.status == "ok" for r in compared)
    starts = sorted(r.started for r in compared)
    assert starts[1] - starts[0] < 2 and min(r.finished for r in compared) > starts[1]  # they overlapped
    timings["compare_run_seconds"] = {r.method: r.totals.seconds for r in compared}


def test_history_reopens_the_saved_runs(page, app):
    page.get_by_role("link", name="History").click()
    page.get_by_role("heading", name="History", level=1).wait_for()
    settle(page)
    expect(page.get_by_text("3 of 3 runs")).to_be_visible()  # the Ask run and the two compared ones
    expect(page.locator(".answer-line")).to_have_count(1)
    snap(page, "09_history")
