"""How long a live run will take, in headless chromium at 1440 and 1024 px: the estimate before Run (and, for a run
of minutes, the link to the recorded pack's run of the method, which the Workshop opens), the pace and the busy
notice while a run goes, and a repeat served from the cache saying so, with Run fresh asking the model again.

The model is a scripted endpoint that calls itself the embedded model (so the measured figures apply), whose reply
waits at a gate after its first words until the test lets it on; the response cache is on, as it is for a user.
The busy notice needs another program using the CPU: the test starts one (a busy loop) and ends it by its id.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from core.engine.llm.embedded import MODEL_NAME
from tests.e2e.conftest import button, open_page, pick, scripted_env, settle, snap
from tests.e2e.waits import until
from tests.fake_endpoint import FakeEndpoint, Step

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

WIDTHS = (1440, 1024)
CASE = "Cardiology · Acute inferior ST-elevation myocardial infarction"
REPLY = {"reasoning": "Inferior ST elevation: the right coronary artery; reperfusion comes first.", "answer": "B"}


@pytest.fixture(scope="module")
def app_env(tmp_path_factory, gate):
    endpoint = FakeEndpoint(script=lambda request: Step(text=json.dumps(REPLY), pieces=4, gate=gate, held_at=(2,)))
    env = scripted_env(endpoint, tmp_path_factory.mktemp("no-model"), model=MODEL_NAME)
    yield {**env, "MEDRAG_CACHE": "auto"}
    gate.open()
    endpoint.close()


@pytest.fixture
def other_program():
    """A program other than the studio keeping one core busy, while the test needs it."""
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield burner
    burner.kill()
    burner.wait()


def test_the_estimate_before_run_and_the_link_to_the_recorded_pack(page, app):
    url, _ = app
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 1000})
        open_page(page, f"{url}/ask", "Ask")
        expect(page.get_by_text(re.compile(r"CoT: expect about \d+ s on this computer"))).to_be_visible()
        pick(page, "Method", "i-MedRAG")
        estimate = page.get_by_text(re.compile(r"i-MedRAG: expect about \d+ min \d+ s on this computer"))
        expect(estimate).to_be_visible()
        expect(estimate).to_contain_text("measured on the embedded model")
        link = page.get_by_role("link", name="Watch i-MedRAG recorded, in the Workshop")
        expect(link).to_be_visible()
        snap(page, f"pace_estimate_{width}", width)
    link.click()
    page.get_by_role("heading", name="Workshop", level=1).wait_for()
    settle(page)
    methods = page.locator('[data-testid="stMultiSelect"]', has_text="Methods")
    expect(methods).to_contain_text("i-MedRAG")  # the pack's run of the method, ready to replay
    expect(page.get_by_role("combobox", name="Case")).to_have_value(re.compile("ST-elevation"))


def test_while_a_run_goes_its_pace_and_the_busy_computer_are_said(page, app, gate, other_program):
    url, _ = app
    page.set_viewport_size({"width": 1440, "height": 1000})
    open_page(page, f"{url}/ask", "Ask")
    pick(page, "Method", "CoT")
    pick(page, "Start from a teaching case", CASE)
    button(page, "Run").click()
    until(lambda: gate.held == 1, "the run's reply held after its first two words")
    expect(
        page.get_by_text(re.compile(r"writing [\d.]+ tokens/s now · (about .* left of the|past the)"))
    ).to_be_visible()
    notice = page.get_by_text(re.compile(r"The computer is busy \(\d+ other programs? uses? the CPU\)"))
    expect(notice).to_be_visible()
    for width in WIDTHS:
        snap(page, f"pace_busy_{width}", width)
    gate.let()
    expect(page.get_by_role("button", name="Stop")).to_have_count(0)
    settle(page)
    expect(page.locator(".answer-line")).to_have_count(1)


def test_a_repeat_from_the_cache_says_so_and_run_fresh_asks_the_model(page, app, gate):
    url, _ = app
    page.set_viewport_size({"width": 1440, "height": 1000})
    button(page, "Ask again").click()
    settle(page)
    button(page, "Run").click()  # the same question again: every reply is in the cache
    header = page.get_by_text(re.compile(r"Served from the cache — recorded \d{4}-\d\d-\d\d \d\d:\d\d, took \d+ s"))
    expect(header).to_be_visible()
    expect(page.get_by_text(re.compile(r"^CoT: served from the cache in \d+ s"))).to_be_visible()
    expect(page.get_by_text("CoT: greedy (temperature 0), so the model writes the same reply again")).to_be_visible()
    assert gate.held == 0  # nothing reached the model
    # the page may draw the header before its next poll sees the run ended: Run fresh is enabled only then
    expect(page.get_by_role("button", name="Stop")).to_have_count(0)
    settle(page)
    for width in WIDTHS:
        snap(page, f"pace_cached_header_{width}", width)
    button(page, "Run fresh").click()
    until(lambda: gate.held == 1, "the fresh run's call held at the endpoint")
    gate.let()
    expect(page.get_by_role("button", name="Stop")).to_have_count(0)
    settle(page)
    expect(page.locator(".answer-line")).to_have_count(1)
    expect(header).to_have_count(0)  # this one reached the model
