"""Exploring, finished, in headless chromium at 1440 and 1024 px: links between pages, a run's life (Stop from the
first second, a reload re-attaches, a new run clears the old result), teaching marks, budget cuts, the method map,
Compare in swimlanes kept as a group, a CJK font, and a multiple-choice question with no options refused.

Saved runs come from real runs of the embedded model on the teaching pack's asthma case (tests/data/), loaded into
the app's store before it starts. The live runs are CoT on a scripted endpoint whose reply waits at a gate until the
test lets it on: the run is seen reading its prompt, followed after a reload, seen writing its first words, and
stopped mid-call, each while the reply is held, on any machine.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from benchmarks.first_token import FIRST_TOKEN_JS
from core.engine.trace import Run
from tests.e2e.conftest import ON_SCREEN, button, follow_anchor, open_page, pick, saved_runs, scripted_env, settle, snap
from tests.e2e.waits import until
from tests.fake_endpoint import FakeEndpoint, Step

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

DATA = Path(__file__).resolve().parents[1] / "data"
RECORDED = ("sema_asthma_run", "cot_asthma_run", "medrag_asthma_run")
CASE = "Cardiology · Acute inferior ST-elevation myocardial infarction"
WIDTHS = (1440, 1024)


REPLY = {"reasoning": "Inferior ST elevation: the right coronary artery; reperfusion comes first.", "answer": "B"}


@pytest.fixture(scope="module")
def app_env(tmp_path_factory, gate):
    endpoint = FakeEndpoint(script=lambda request: Step(text=json.dumps(REPLY), pieces=4, gate=gate, held_at=(0, 1)))
    yield scripted_env(endpoint, tmp_path_factory.mktemp("no-model"))
    gate.open()
    endpoint.close()


@pytest.fixture(scope="module")
def seed_runs() -> list[Run]:
    return [Run.model_validate_json((DATA / f"{name}.json").read_text()) for name in RECORDED]


def _no_sideways_scroll(page) -> None:
    """Nothing on the page is wider than the window (no clipped table, no column pushed out)."""
    wide = page.evaluate(
        "(() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
        " return m.scrollWidth - m.clientWidth; })()"
    )
    assert wide <= 1, f"the page is {wide}px wider than the window"


def test_links_open_ask_history_and_compare(page, app, seed_runs):
    url, _ = app
    sema, cot, _ = seed_runs
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 1000})
        open_page(page, f"{url}/ask", "Ask")
        expect(page.get_by_text("Page not found")).to_have_count(0)
        expect(page.locator('[data-testid="stGraphVizChart"] svg')).to_contain_text("Clinician")  # CoT's map
        snap(page, f"explore_ask_link_{width}", width)
        open_page(page, f"{url}/history?run={sema.id}", "History")
        expect(page.get_by_role("heading", name=re.compile("SEMA-RAG"))).to_be_visible()
        expect(page.locator(".answer-line")).to_contain_text(sema.answer.text)
        open_page(page, f"{url}/ask?run={cot.id}", "Ask")  # a saved run: its trace, Ask again, no Stop
        expect(page.locator(".answer-line")).to_contain_text(cot.answer.text)
        expect(button(page, "Ask again")).to_be_enabled()
        expect(page.get_by_role("button", name="Stop")).to_have_count(0)
    open_page(page, f"{url}/history?run=nosuchrun", "History")
    expect(page.get_by_text("No saved run has the id “nosuchrun”")).to_be_visible()


def test_teaching_marks_budget_cuts_report_once_and_the_map(page, app, seed_runs):
    url, _ = app
    sema = seed_runs[0]
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 1000})
        open_page(page, f"{url}/history?run={sema.id}", "History")
        expect(page.get_by_text("met 4 of 4 key passages")).to_be_visible()  # the run's tally against its case
        reveal = page.get_by_text("Teaching pack answer and note: open to reveal")
        expect(reveal).to_be_visible()  # a neutral title, after the method's answer
        assert reveal.bounding_box()["y"] > page.locator(".answer-line").bounding_box()["y"]
        page.get_by_role("tab", name=re.compile("Evidence")).click()
        evidence = page.locator('[role="tabpanel"]:visible')
        expect(evidence.locator(".tag.teach.outdated")).to_have_count(
            1
        )  # this case's only: marks belong to its question
        expect(evidence.locator(".tag.teach.key").first).to_be_visible()
        expect(evidence.locator(".tag.budget").first).to_have_text("not read: over the reading budget")
        expect(evidence.locator(".tag.drop")).to_have_count(0)  # a budget cut is not a verdict
        evidence.locator(".snip.teach-outdated .teach-note summary").first.click()
        expect(evidence.get_by_text("Since revised:").first).to_be_visible()
        snap(page, f"explore_teaching_marks_{width}", width)
        page.get_by_role("tab", name=re.compile("Trace")).click()
        expect(page.get_by_text("Wrote the report drawn below.")).to_have_count(1)  # the report is drawn once
        expect(page.locator('[data-testid="stChatMessage"]', has_text="锻炼")).to_have_count(1)
        # the model drifted into Chinese: the served CJK font has the glyphs, so the text is legible
        assert page.evaluate("document.fonts.check('16px noto-sans-sc', '锻炼')")
        assert page.evaluate("document.fonts.load('16px noto-sans-sc', '锻炼').then(f => f.length)") >= 1
        # the method map: SEMA-RAG's own stages, each with events a link to them in the trace
        page.get_by_text("Method map", exact=True).click()
        graph = page.locator('[data-testid="stGraphVizChart"] svg')
        expect(graph).to_contain_text("E-Agent judges sufficiency")
        link = graph.locator("a", has_text="A-Agent arbitrates the evidence")
        follow_anchor(page, link, "history-stage-arbitration")
        head = page.locator("#history-stage-arbitration")
        # the map's link scrolls to the stage's events
        page.wait_for_function(ON_SCREEN, arg="#history-stage-arbitration")
        assert -5 <= head.bounding_box()["y"] < 1000
        snap(page, f"explore_history_sema_{width}", width)


def test_compare_swimlanes_fit_1024_and_reopen_as_a_group(page, app, seed_runs):
    url, _ = app
    ids = ",".join(run.id for run in seed_runs)
    page.set_viewport_size({"width": 1024, "height": 1000})
    open_page(page, f"{url}/compare?runs={ids}", "Compare")
    expect(page.locator(".lane-head")).to_have_count(5)
    expect(page.locator(".lane-method")).to_have_text(["SEMA-RAG", "CoT", "MedRAG"])
    _no_sideways_scroll(page)
    snap(page, "explore_compare_swimlanes_1024", 1024)
    page.get_by_role("button", name="Keep these runs as a comparison").click()
    settle(page)
    open_page(page, f"{url}/history", "History")
    page.get_by_text("Comparisons · 1").click()
    page.get_by_role("link", name="Open side by side").click()
    page.get_by_role("heading", name="Compare", level=1).wait_for()
    settle(page)
    assert page.url.endswith(f"runs={ids.replace(',', '%2C')}") or page.url.endswith(f"runs={ids}")
    expect(page.locator(".lane-method")).to_have_count(3)
    snap(page, "explore_compare_swimlanes_1440", 1440)
    _no_sideways_scroll(page)


def test_zero_options_multiple_choice_is_refused(page, app):
    url, _ = app
    open_page(page, f"{url}/ask", "Ask")
    page.get_by_label("Question").fill("Which hormone lowers blood glucose?")
    for left in (3, 2, 1, 0):
        page.get_by_role("button", name="×").first.click()
        expect(page.get_by_role("button", name="×")).to_have_count(left)
        settle(page)
    button(page, "Run").click()
    expect(page.get_by_text("Multiple choice needs at least two options")).to_be_visible()
    snap(page, "explore_zero_options_refused_1024", 1024)


def test_a_runs_life_stop_reload_and_a_new_run_clears_the_old(page, app, gate, timings):
    url, home = app
    page.set_viewport_size({"width": 1440, "height": 1000})
    open_page(page, f"{url}/ask", "Ask")
    pick(page, "Start from a teaching case", CASE)
    started = time.perf_counter()
    button(page, "Run").click()
    stop = page.get_by_role("button", name="Stop")
    stop.wait_for()  # Stop is there while the reply is held before its first byte
    until(lambda: gate.held == 1, "the run's call held at the endpoint")
    timings["click_to_stop_button_s"] = round(time.perf_counter() - started, 1)
    expect(button(page, "Run")).to_have_count(0)  # the run's own question, read-only, replaces the form
    assert "run=" in page.url
    page.reload()  # while the call still reads the prompt: the URL names the run, the reloaded page follows it
    expect(page.get_by_text(re.compile(r"^CoT: Clinician reading the prompt · \d+ s"))).to_be_visible()
    expect(page.get_by_role("button", name="Stop")).to_be_visible()
    gate.let()  # the reply's first chunk, then it is held again: words as they are written
    page.wait_for_function(FIRST_TOKEN_JS, polling=100)
    expect(page.get_by_text(re.compile(r"^CoT: running · now Clinician writing for \d+ s"))).to_be_visible()
    expect(page.locator('[class*="st-key-writing-"]')).to_contain_text("reasoning")
    lit = page.locator('[data-testid="stGraphVizChart"] g.node', has_text="Clinician reasons")
    assert lit.locator("path, polygon").first.get_attribute("fill") == "#0f766e"  # its stage lit on the map
    snap(page, "explore_ask_streaming_1440", 1440)
    expect(page.locator(".answer-line")).to_have_count(0)
    gate.let()  # the rest of the reply
    expect(page.get_by_role("button", name="Stop")).to_have_count(0)
    settle(page)
    expect(page.locator(".answer-line")).to_have_count(1)
    snap(page, "explore_ask_done_1440", 1440)
    snap(page, "explore_ask_done_1024", 1024)
    # a second run: asked again (the form comes back filled with the case); the first one's answer leaves the screen
    # at once; Stop then ends it while its call is still held at the endpoint, before any reply.
    button(page, "Ask again").click()
    settle(page)
    expect(page.get_by_label("Question")).to_have_value(re.compile("ST elevation"))
    button(page, "Run").click()
    stop.wait_for()
    until(lambda: gate.held == 1, "the second run's call held at the endpoint")
    expect(page.locator(".answer-line")).to_have_count(0)
    stop.click()
    expect(page.get_by_role("button", name="Stop")).to_have_count(0)  # a held call does not hold the stop up
    settle(page)
    expect(page.get_by_text("CoT: stopped after")).to_be_visible()
    expect(button(page, "Ask again")).to_be_enabled()
    snap(page, "explore_ask_stopped_1440", 1440)
    statuses = [r.status for r in saved_runs(home)[:2]]
    assert statuses == ["cancelled", "ok"]
    gate.let()  # the stopped run's call, whose client has gone
