"""What a user sees is true, in headless chromium at 1440 and 1024 px, in one browser session over a studio folder
left as a team leaves it (``truth_seed``): every page walked with an owner's and two annotators' labels and no
Python error anywhere; adjudication with one row per disputed snippet; teaching marks only on their own case's
question; reopened runs and comparisons saying what they are; an answer its reasoning rejects flagged; the workshop
reveal on top with a personal tally and closed predictions. No model: the studio folder holds what the pages draw.

Screenshots go to artifacts/screenshots/truth_*.png.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import ON_SCREEN, choose, open_page, settle, snap
from tests.e2e.conftest import shot as screen
from tests.e2e.truth_seed import seed

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]
WIDTHS = (1440, 1024)
PAGES = ("ask", "compare", "benchmark", "workshop", "history", "annotate", "settings")


@pytest.fixture(scope="module")
def studio(app):
    """The served app's folder, filled as a team leaves it (the server reads its store on each page)."""
    url, home = app
    return url, home, seed(home)


def shot(page, name: str, width: int) -> None:
    snap(page, f"truth_{name}_{width}", width)


def no_error(page, where: str) -> None:
    """No Python exception element, no error box of the app's own about a crash."""
    assert page.locator('[data-testid="stException"]').count() == 0, f"a Python traceback on {where}"


def test_every_page_at_both_widths_with_three_annotators_shows_no_traceback(page, studio):
    url, _, ids = studio
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 1000})
        open_page(page, f"{url}/?run={ids['cot']}", "Ask")  # the root: on to Ask, the address kept
        assert f"run={ids['cot']}" in page.url
        no_error(page, "the root")
        for name in PAGES:
            open_page(page, f"{url}/{name}", name.capitalize())
            no_error(page, name)
        open_page(page, f"{url}/annotate", "Annotate")
        for tab in ("Agreement", "Metrics", "Export and import"):
            page.get_by_role("tab", name=tab).click()
            settle(page)
            no_error(page, f"Annotate › {tab}")
        for link in (
            f"history?run={ids['bench']}",
            f"ask?run={ids['mass']}",
            f"compare?runs={ids['medrag']},{ids['cot']}",
        ):
            open_page(page, f"{url}/{link}", link.split("?")[0].capitalize())
            no_error(page, link)


def test_adjudication_lists_each_disputed_snippet_once_with_every_grade(page, studio):
    url = studio[0]
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 1000})
        open_page(page, f"{url}/annotate", "Annotate")
        page.get_by_role("tab", name="Agreement").click()
        settle(page)
        rows = page.locator('[class*="st-key-annotate-conflict-"]')
        expect(rows.first).to_be_visible()
        for n in range(rows.count()):
            assert rows.nth(n).locator(".side").count() == 3  # owner, ann and bob on one row
        expect(page.get_by_text(re.compile(r"^Case “.*asthma", re.IGNORECASE)).first).to_be_visible()
        no_error(page, "Agreement")
        shot(page, "annotate_agreement", width)
        page.get_by_role("tab", name="Metrics").click()
        settle(page)
        expect(page.get_by_text("judged on different questions", exact=False)).to_be_visible()
        # MASS-RAG was judged on another case only: left out, SEMA-RAG and MedRAG share the asthma case
        page.locator('[data-testid="stMultiSelect"]', has_text="Methods to compare").get_by_label(
            "Remove MASS-RAG"
        ).click()
        settle(page)
        page.get_by_text("Shared questions only", exact=False).click()
        settle(page)
        expect(page.get_by_text(re.compile(r"runs? scored\*?\*? over 1 question"))).to_be_visible()
        shot(page, "annotate_metrics_shared", width)


def test_marks_belong_to_their_own_case_and_reopened_runs_say_what_they_are(page, studio):
    url, _, ids = studio
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 1000})
        open_page(page, f"{url}/history?run={ids['bench']}", "History")  # a benchmark question, teaching passages
        page.get_by_role("tab", name=re.compile("Evidence")).click()
        expect(page.locator('[role="tabpanel"]:visible .snip').first).to_be_visible()
        expect(page.locator(".tag.teach")).to_have_count(0)
        expect(page.get_by_text("Teaching case", exact=False)).to_have_count(0)
        shot(page, "bench_question_no_marks", width)
        open_page(page, f"{url}/ask?run={ids['mass']}", "Ask")
        expect(page.get_by_text("Method · MASS-RAG")).to_be_visible()
        expect(page.locator('[class*="st-key-ask-asked"]')).to_contain_text("crushing central chest pain")
        expect(page.get_by_label("Question")).to_have_count(0)  # no form with another method above the run
        shot(page, "ask_reopened_mass", width)
        open_page(page, f"{url}/compare?runs={ids['medrag']},{ids['cot']}", "Compare")
        expect(page.get_by_text("Method · MedRAG")).to_be_visible()
        expect(page.locator('[class*="st-key-compare-asked"]')).to_contain_text("salbutamol")
        expect(page.get_by_placeholder(re.compile("crushing chest pain"))).to_have_count(0)
        shot(page, "compare_reopened", width)
    page.get_by_role("button", name="Ask again").click()
    settle(page)
    expect(page.get_by_label("Question")).to_have_value(re.compile("salbutamol"))


def test_an_answer_its_reasoning_rejects_is_flagged(page, studio):
    url, _, ids = studio
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 1000})
        open_page(page, f"{url}/history?run={ids['dka']}", "History")
        card = page.locator('[class*="st-key-answer-card-mismatch-"]')
        expect(card).to_contain_text("The answer is C, but its reasoning argues against it")
        expect(card).to_contain_text("Subcutaneous rapid-acting insulin is not recommended")
        shot(page, "dka_flagged", width)


def test_the_reveal_comes_on_top_with_a_personal_tally_and_closes_the_predictions(page, studio):
    url = studio[0]
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 1000})
        open_page(page, f"{url}/workshop", "Workshop")
        choose(page, page.locator('[data-testid="stMultiSelect"]', has_text="Methods"), "MedRAG")
        page.get_by_text("A. High-flow oxygen", exact=False).first.click()
        settle(page)
        page.get_by_role("button", name="Next", exact=True).click()
        settle(page)
        page.get_by_role("button", name="Reveal the answer").click()
        settle(page)
        page.wait_for_function(ON_SCREEN, arg=".st-key-ws-reveal")  # brought into view when it comes
        reveal = page.locator(".st-key-ws-reveal")
        expect(reveal).to_contain_text("Your predictions: right for 0 of 1 method")
        expect(reveal).to_contain_text("you predicted A")
        top = reveal.bounding_box()["y"]
        assert -5 <= top < 1000, f"the reveal starts {top:.0f} px down: it must be on screen when it comes"
        screen(page, f"truth_reveal_on_screen_{width}")  # the screen as it comes
        shot(page, "reveal", width)
        page.get_by_role("button", name="Previous", exact=True).click()
        settle(page)
        expect(page.get_by_text("Predictions are closed", exact=False)).to_be_visible()
        expect(page.get_by_role("radio", name=re.compile("High-flow oxygen"))).to_have_count(0)
        shot(page, "closed_predictions", width)
        page.reload()  # a fresh session for the next width
