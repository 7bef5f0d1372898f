"""Evidence a clinician can check, in headless chromium at 1440 and 1024 px, on recorded runs (the workshop pack's
STEMI case, no model): an id in the SEMA-RAG arbiter's columns is a link that opens its card by the number the
cards carry; the rationale cut at its reply format's bound says so; Annotate's attribution mode judges a claim
against a snippet blind. Screenshots go to artifacts/screenshots/evidence_*.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from core.studio.workshop.pack import PACK_DIR, load_pack
from tests.e2e.conftest import TAKE_SHOTS, laid_out, open_page, settle
from tests.e2e.conftest import shot as screen

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]
WIDTHS = (1440, 1024)


def stemi() -> dict:
    case = next(c for c in load_pack(PACK_DIR)[0] if c.case.id == "stemi")
    return {m: case.runs[m].run for m in ("sema", "mass")}


@pytest.fixture(scope="module")
def seed_runs() -> list:
    return list(stemi().values())


def shot(page, name: str, width: int, around) -> None:
    """The part of the screen around an element, as a user sees it there."""
    around.scroll_into_view_if_needed()
    if not TAKE_SHOTS:
        return
    laid_out(page)
    top = max(0, around.bounding_box()["y"] - 120)
    screen(page, f"evidence_{name}_{width}", clip={"x": 0, "y": top, "width": width, "height": 760})


def test_an_arbiters_id_opens_its_card_and_a_cut_rationale_says_so(page, app):
    url, _ = app
    run = stemi()["sema"]
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 1000})
        open_page(page, f"{url}/history?run={run.id}", "History")
        note = page.get_by_text("stops mid-sentence at 200 characters").first
        expect(note).to_be_visible()  # under the answer card's rationale, which ends "…The centre can reo"
        expect(page.get_by_text("The centre can reo …").first).to_be_visible()
        shot(page, "cut_note", width, note)
        supporting = page.locator("li", has_text="Blood pressure is 138/84 mmHg").last  # the A-Agent's column
        chip = supporting.locator('.idref[data-doc="tp-stemi-n2"]')  # "[tp-stemi-k1, tp-stemi-n2]" there
        expect(chip.locator(".idnum")).to_have_text("#13")  # the number its card carries
        expect(chip.locator(".idpop")).to_be_hidden()
        chip.click()
        pop = chip.locator(".idpop")
        expect(pop).to_be_visible()
        expect(pop).to_contain_text("Acute aortic dissection")
        shot(page, "id_link_clicked", width, chip)
        folded = page.get_by_text("×2, repeated").first
        expect(folded).to_be_visible()  # the conflict the A-Agent wrote twice, drawn once


def test_attribution_mode_judges_a_claim_against_a_snippet_blind(page, app):
    url, home = app
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 1000})
        open_page(page, f"{url}/annotate", "Annotate")
        # the name form, or the name this session already gave: wait for one before choosing (a slow page draws
        # the form after its heading, and a count taken then finds nothing)
        name = page.get_by_label("Your name (stored with every label)")
        expect(name.or_(page.get_by_text("Labelling as ann"))).to_be_visible()
        if name.count():
            name.fill("ann")
            page.get_by_role("button", name="Start labelling").click()
            page.get_by_text("Labelling as ann").wait_for()
            settle(page)
        page.get_by_text("Attribution: a snippet for a claim of an answer", exact=True).click()
        settle(page)
        first = page.locator('[class*="st-key-attr-pair-1"]')
        expect(first.locator(".claim-judge")).to_be_visible()
        expect(first.locator(".snip.judge")).to_be_visible()
        expect(first).not_to_contain_text("tp-stemi-")  # no id, method or verdict on screen
        first.get_by_text("partly", exact=True).click()
        settle(page)
        shot(page, "attribution_mode", width, first)
    from core.studio.labels import LabelStore

    assert [label.grade for label in LabelStore(home / "studio.sqlite").attributions()] == [1]
