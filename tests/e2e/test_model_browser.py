"""The embedded model in the browser, where the model is the subject: its start from Settings as a job (progress, no
stop midway, found again after a reload, listed in History's "Running now"), a live CoT run on Ask with a small
budget (the model's own words streamed into the page, then its trace), and a run that waits behind a benchmark
filling the model's slots and says so (the queue only the embedded server's known slots make). Every other browser
module runs on saved runs or a scripted endpoint and has no model to start. Screenshots go to
artifacts/screenshots/model_*.png, timings to artifacts/screenshots/timings-test_model_browser.json.
"""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import choose, new_page, open_page, pick, saved_runs, set_number, settle, shot, snap
from tests.e2e.truth_seed import BENCH_QUESTION, mini_benchmark
from tests.e2e.waits import ms

pytestmark = [pytest.mark.browser, pytest.mark.model, pytest.mark.timeout(1800)]
CASE = "Cardiology · Acute inferior ST-elevation myocardial infarction"
MODEL = ms("model")


@pytest.fixture(scope="module")
def app_env() -> dict[str, str]:
    return {}  # the embedded model, from the test session's model folder


def test_the_model_start_runs_as_a_job_that_survives_a_reload(page, app):
    url = app[0]
    page.set_viewport_size({"width": 1440, "height": 1000})
    open_page(page, f"{url}/settings", "Settings")
    settle(page)
    page.get_by_role("button", name="Start the embedded model").click()
    starting = page.get_by_text("Starting the embedded model ·", exact=False)
    running = page.get_by_text("server running")
    expect(starting.or_(running)).to_be_visible(timeout=MODEL)  # it loads in seconds when assembled
    if starting.count():  # the start may end at any moment: each check below accepts its end too
        shot(page, "model_starting_1440")  # as it comes
        no_stop = page.get_by_text("The model's start cannot be stopped midway", exact=False)
        expect(no_stop.or_(running)).to_be_visible()
    page.set_viewport_size({"width": 1024, "height": 1000})
    open_page(page, f"{url}/history", "History")  # another page while it loads
    listed = page.get_by_text("model start", exact=True)
    if listed.count():  # still loading: listed with no Stop
        expect(page.get_by_role("button", name="Stop")).to_have_count(0)
        snap(page, "model_history_running_1024", 1024)
    open_page(page, f"{url}/settings", "Settings")  # a reload finds the start going, or done
    page.get_by_text("server running").wait_for(timeout=MODEL)
    snap(page, "model_ready_1024", 1024)


def test_ask_shows_a_live_run_of_the_model_then_its_trace(page, app, timings):
    app_url, home = app
    page.set_viewport_size({"width": 1440, "height": 1000})
    open_page(page, f"{app_url}/ask", "Ask")
    expect(page.get_by_text("For research and teaching, not for clinical use.")).to_be_visible()
    pick(page, "Start from a teaching case", CASE)
    expect(page.get_by_label("Question")).to_have_value(re.compile("crushing central chest pain"))
    page.get_by_text("Knobs", exact=True).click()
    set_number(page, "Max tokens", 160)
    settle(page)
    snap(page, "model_ask_ready")

    started = time.perf_counter()
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text(re.compile("^CoT: ")).first.wait_for(timeout=MODEL)  # the live status
    page.locator(".answer-line").wait_for(timeout=MODEL)
    timings["ask_total_s"] = round(time.perf_counter() - started, 1)
    settle(page)
    expect(page.get_by_text("CoT: done in")).to_be_visible()
    expect(page.locator('[data-testid="stChatMessage"]')).to_have_count(1)
    expect(page.get_by_text("Teaching pack answer")).to_be_visible()
    snap(page, "model_ask_trace")
    run = saved_runs(home)[0]
    assert run.status == "ok" and run.answer.choice in run.options
    timings["ask_run_seconds"] = run.totals.seconds
    timings["ask_run_tokens"] = run.totals.tokens
    page.get_by_role("tab", name="Time and tokens").click()
    page.locator(".js-plotly-plot").first.wait_for()
    snap(page, "model_ask_time_and_tokens")


def test_the_benchmark_checks_its_corpora_and_a_waiting_run_says_behind_what(page, app, tmp_path):
    """The default corpora checked against MIRAGE questions, then four benchmark questions fill the model's four
    slots and a run asked meanwhile says it waits behind them; the benchmark gives an estimate before its first
    question ends."""
    url = app[0]
    page.set_viewport_size({"width": 1440, "height": 1000})
    open_page(page, f"{url}/benchmark", "Benchmark")
    choose(page, page.locator('[data-testid="stMultiSelect"]', has_text="Methods"), "MedRAG")
    corpora = page.locator(".st-key-bench-corpora")
    expect(corpora).to_contain_text("The default corpora are the HPO phenotype definitions")
    page.get_by_role("button", name=re.compile("Check them on")).click()
    expect(corpora.get_by_text(re.compile(r"\d of \d questions found a passage on their topic"))).to_be_visible(
        timeout=ms("index")
    )
    expect(corpora.get_by_label(re.compile("Or add a corpus"))).to_be_visible()
    snap(page, "model_benchmark_corpora", 1440)

    open_page(page, f"{url}/benchmark", "Benchmark")  # a new session: CoT alone, as the page starts
    path = page.get_by_label("Path", exact=True)
    path.fill(str(mini_benchmark(tmp_path)))
    path.press("Enter")
    settle(page)
    page.get_by_text("Every question", exact=True).click()
    settle(page)
    at_once = page.get_by_label("Questions at once", exact=True)
    at_once.fill("4")
    at_once.press("Enter")
    settle(page)
    page.get_by_role("button", name="Start", exact=True).click()
    expect(page.get_by_text("at the pace expected for these methods", exact=False)).to_be_visible(
        timeout=MODEL
    )  # an estimate before the first question ends
    snap(page, "model_benchmark_estimate", 1440)

    asker = new_page(page.context.browser, 1440)  # another session
    open_page(asker, f"{url}/ask", "Ask")
    expect(asker.get_by_text("Runs on the embedded model", exact=False)).to_be_visible()
    asker.get_by_label("Question").fill(BENCH_QUESTION)
    remove = asker.get_by_role("button", name="×")
    for left in (3, 2):
        remove.nth(2).click()
        expect(remove).to_have_count(left)
        settle(asker)
    for letter in ("A", "B"):
        asker.get_by_label(f"Option {letter}").fill(f"Inhaler {letter}")
    settle(asker)
    asker.get_by_role("button", name="Run", exact=True).click()
    expect(asker.get_by_text(re.compile(r"waiting: \d runs? ahead on the embedded model")).first).to_be_visible(
        timeout=MODEL
    )
    expect(asker.get_by_text(":material/hourglass_top:")).to_have_count(0)  # drawn as an icon, not as text
    box = asker.locator('[data-testid="stExpander"]', has_text="waiting:")
    expect(box.locator('[data-testid="stExpanderIconSpinner"]')).to_have_count(1)  # running: no tick yet
    expect(box.locator('[data-testid="stExpanderIconCheck"]')).to_have_count(0)
    snap(asker, "model_ask_waiting", 1440)
    lit = asker.locator('[data-testid="stGraphVizChart"] g.node', has_text="Clinician reasons")
    assert lit.locator("path, polygon").first.get_attribute("fill") == "#0f766e"  # the waiting call's stage
    page.get_by_role("button", name="Stop", exact=True).click()  # the benchmark: its four calls end
    expect(asker.get_by_text(re.compile(r"reading the prompt|writing")).first).to_be_visible(timeout=MODEL)
    asker.get_by_role("button", name="Stop", exact=True).click()
    expect(asker.get_by_text("CoT: stopped after")).to_be_visible(timeout=MODEL)
    assert asker.locator('[data-testid="stException"]').count() == 0
    asker.context.close()
