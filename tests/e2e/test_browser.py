"""The real app on the embedded model, driven in headless chromium: Ask (CoT on a teaching case), Settings
(corpora), Compare (CoT and MedRAG at once) and History. Screenshots go to artifacts/screenshots/, timings
to artifacts/screenshots/timings.json.

Slow by nature (the model reads ~45 tokens/s on two cores), so budgets are small: every answer has at most
160 tokens, and MedRAG reads 4 snippets within 1,000 characters from the teaching pack alone.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.timeout(1800)]

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "artifacts" / "screenshots"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
CASE = "Cardiology · Acute inferior ST-elevation myocardial infarction"
MODEL_SECONDS = 1_200_000  # ms: a whole run when other work shares the two cores
timings: dict[str, float] = {}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The app served by ``streamlit run`` from a fresh state folder: (its URL, that folder)."""
    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium, or `make browser`)")
    home = tmp_path_factory.mktemp("studio-home")
    env = {k: v for k, v in os.environ.items() if k not in ("MEDRAG_BASE_URL", "MEDRAG_MODEL", "MEDRAG_API_KEY")}
    env["MEDRAG_STUDIO_HOME"] = str(home)
    port = _free_port()
    log = open(home / "streamlit.log", "w")
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("streamlit")), "run", "streamlit_app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1"], cwd=REPO, env=env, stdout=log,
        stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
            break
        except OSError:
            time.sleep(0.3)
    else:
        server.terminate()
        pytest.fail(f"the app did not start: {(home / 'streamlit.log').read_text()[-2000:]}")
    yield url, home
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "timings.json").write_text(json.dumps(timings, indent=1))
    server.terminate()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:  # a model call still in flight can hold the server up
        server.kill()
        server.wait()
    log.close()


@pytest.fixture(scope="module")
def page(app):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        yield page
        browser.close()


def snap(page, name: str) -> None:
    """The whole page: Streamlit scrolls inside its main block, so the viewport grows to fit it first."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": 1400, "height": max(1000, min(height, 12000))})
    page.wait_for_timeout(800)
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    page.set_viewport_size({"width": 1400, "height": 1000})


def open_page(page, url: str, title: str) -> None:
    page.goto(url)
    page.get_by_role("heading", name=title, level=1).wait_for()
    page.wait_for_load_state("networkidle")


def settle(page) -> None:
    """Wait for Streamlit's rerun after an input to finish."""
    page.wait_for_timeout(300)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=MODEL_SECONDS)


def pick(page, label: str, option: str) -> None:
    page.locator('[data-testid="stSelectbox"]', has_text=label).click()
    page.get_by_role("option", name=option).click()
    settle(page)


def set_number(scope, label: str, value: int) -> None:
    box = scope.get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Enter")


def saved_runs(home: Path) -> list:
    from core.store import RunStore

    store = RunStore(home / "studio.sqlite")
    return [store.load_run(row["id"]) for row in store.list_runs()]


def test_ask_shows_the_run_live_then_its_trace(page, app):
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
    page.get_by_text("Embedded model ready").wait_for(state="attached", timeout=MODEL_SECONDS)
    timings["model_start_s"] = round(time.perf_counter() - started, 1)
    page.get_by_text("CoT: running").wait_for(timeout=MODEL_SECONDS)  # the live status, before any answer
    timings["ask_running_shown_s"] = round(time.perf_counter() - started, 1)
    # CoT has one step: its event and the end of the run come together, and the status then folds away
    page.get_by_text("] reasoning · Clinician").first.wait_for(state="attached", timeout=MODEL_SECONDS)
    timings["ask_first_event_s"] = round(time.perf_counter() - started, 1)
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


def test_settings_lists_the_corpora_and_limits_them(page, app):
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


def test_compare_runs_two_methods_at_once(page, app):
    page.get_by_role("link", name="Compare").click()  # in-app navigation keeps this session's settings
    page.get_by_role("heading", name="Compare", level=1).wait_for()
    settle(page)
    page.get_by_label("Question").fill("ST elevation in II, III and aVF: which coronary artery is usually occluded?")
    page.get_by_label("Option A").fill("Left anterior descending artery")
    page.get_by_label("Option B").fill("Right coronary artery")
    page.get_by_label("Option B").press("Enter")
    settle(page)
    remove = page.get_by_role("button", name="✕")
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
    page.get_by_text("] retrieval · Retriever").first.wait_for(state="attached", timeout=MODEL_SECONDS)
    timings["compare_first_retrieval_s"] = round(time.perf_counter() - started, 1)
    live = page.get_by_text("Full traces").count() == 0  # the retrieval is shown before the runs end
    snap(page, "07_compare_running")
    page.get_by_role("heading", name="Full traces").wait_for(timeout=MODEL_SECONDS)
    timings["compare_total_s"] = round(time.perf_counter() - started, 1)
    settle(page)
    assert live
    expect(page.get_by_text("CoT: done in")).to_be_visible()
    expect(page.get_by_text("MedRAG: done in")).to_be_visible()
    expect(page.locator(".phase-head")).to_have_count(4)
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
