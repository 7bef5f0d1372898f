"""Claims and their evidence in headless chromium, on recorded runs of the workshop pack saved in the store (no
model): History draws a MASS-RAG run; its claims are turned on; a click on a claim lights its supporting span in the
snippet card the answer cites, and a click on that card's "supports" tag lights the claims it supports. Both are
the browser's own (no rerun). Screenshots at 1440 and 1024 px go to artifacts/screenshots/evidence_*.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from core.studio.workshop.pack import load_pack
from tests.e2e.conftest import SETTLED, open_page, settle, snap
from tests.e2e.waits import ms

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]
LIT_MARK = "rgb(253, 230, 138)"  # a lit span's background (runs/evidence_view.stylesheet)
LIT_CLAIM = "rgb(254, 243, 199)"
QUOTE = "supplemental oxygen is given only when oxygen saturation is below 90%"


@pytest.fixture(scope="module")
def mass():
    case = next(c for c in load_pack()[0] if c.case.id == "stemi")
    return case.runs["mass"].run


@pytest.fixture(scope="module")
def seed_runs(mass):
    return [mass]


def background(locator) -> str:
    return locator.evaluate("e => getComputedStyle(e).backgroundColor")


def test_a_claim_lights_its_span_and_a_snippet_lights_its_claims(app, page, mass):
    url, _ = app
    open_page(page, f"{url}/history?run={mass.id}", "History")
    page.get_by_text("Claims and their evidence", exact=True).click()
    page.wait_for_function(SETTLED, polling=100, timeout=ms("index"))  # the first map loads the embedder
    claim = page.locator("label.ev-claim", has_text=QUOTE).first
    expect(claim).to_be_visible(timeout=ms("index"))
    card = page.locator('[data-testid="stMain"] .snip.cited', has_text="Oxygen in acute myocardial infarction").first
    token = claim.evaluate("e => [...e.classList].find(c => /^ev[0-9a-f]{10}$/.test(c))")
    quote = card.locator(f".ev-quote.{token}")
    expect(quote).to_be_hidden()

    claim.click()
    expect(quote).to_be_visible()
    assert background(quote.locator("mark")) == LIT_MARK
    assert background(claim) == LIT_CLAIM
    for width in (1440, 1024):
        claim.scroll_into_view_if_needed()
        snap(page, f"evidence_claim_clicked_{width}", width)

    other = page.locator("label.ev-claim", has_text="The most appropriate immediate management is option B").first
    other.click()
    expect(quote).to_be_hidden()  # one claim lit at a time

    card.locator("label.ev-doc-pick").click()
    expect(claim).to_have_css("background-color", LIT_CLAIM)
    expect(quote).to_be_visible()  # the card's own spans, with their claims
    assert "supports" in card.locator("label.ev-doc-pick").inner_text()
    for width in (1440, 1024):
        snap(page, f"evidence_snippet_clicked_{width}", width)

    page.locator("label.ev-clear").click()
    expect(quote).to_be_hidden()
    expect(claim).not_to_have_css("background-color", LIT_CLAIM)
    settle(page)  # nothing above asked the server for a rerun: the page is as it was drawn
