"""What a user sees is true, in headless chromium at 1440 and 1024 px, in one browser session over a studio folder
left as a team leaves it (``truth_seed``): every page walked with an owner's and two annotators' labels and no
Python error anywhere; adjudication with one row per disputed snippet; teaching marks only on their own case's
question; reopened runs and comparisons saying what they are; an answer its reasoning rejects flagged; the workshop
reveal on top with a personal tally and closed predictions; the Benchmark page's corpora check; then, on the real
embedded model, a run waiting behind a benchmark that says so, and the benchmark's estimate from the start.

Screenshots go to artifacts/screenshots/truth_*.png.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import MODEL_SECONDS, SHOTS, choose, open_page, settle, snap
from tests.e2e.truth_seed import BENCH_QUESTION, mini_benchmark, seed

pytestmark = [pytest.mark.browser, pytest.mark.default_index, pytest.mark.timeout(1200)]
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
        page.wait_for_timeout(800)
        reveal = page.locator(".st-key-ws-reveal")
        expect(reveal).to_contain_text("Your predictions: right for 0 of 1 method")
        expect(reveal).to_contain_text("you predicted A")
        top = reveal.bounding_box()["y"]
        assert -5 <= top < 1000, f"the reveal starts {top:.0f} px down: it must be on screen when it comes"
        page.screenshot(path=str(SHOTS / f"truth_reveal_on_screen_{width}.png"))  # the screen as it comes
        shot(page, "reveal", width)
        page.get_by_role("button", name="Previous", exact=True).click()
        settle(page)
        expect(page.get_by_text("Predictions are closed", exact=False)).to_be_visible()
        expect(page.get_by_role("radio", name=re.compile("High-flow oxygen"))).to_have_count(0)
        shot(page, "closed_predictions", width)
        page.reload()  # a fresh session for the next width


def test_the_benchmark_checks_its_corpora_and_a_waiting_run_says_behind_what(page, studio, tmp_path):
    """On the embedded model: the default corpora checked against MIRAGE questions, then four benchmark questions fill
    the model's four slots and a run asked meanwhile says it waits behind them; the benchmark gives an estimate
    before its first question ends."""
    url, _, _ = studio
    page.set_viewport_size({"width": 1440, "height": 1000})
    open_page(page, f"{url}/benchmark", "Benchmark")
    choose(page, page.locator('[data-testid="stMultiSelect"]', has_text="Methods"), "MedRAG")
    corpora = page.locator(".st-key-bench-corpora")
    expect(corpora).to_contain_text("The default corpora are the HPO phenotype definitions")
    page.get_by_role("button", name=re.compile("Check them on")).click()
    expect(corpora.get_by_text(re.compile(r"\d of \d questions found a passage on their topic"))).to_be_visible(
        timeout=MODEL_SECONDS
    )
    expect(corpora.get_by_label(re.compile("Or add a corpus"))).to_be_visible()
    shot(page, "benchmark_corpora", 1440)
    shot(page, "benchmark_corpora", 1024)

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
    expect(page.get_by_text("at the pace recorded for these methods", exact=False)).to_be_visible(
        timeout=MODEL_SECONDS
    )  # an estimate before the first question ends
    shot(page, "benchmark_estimate", 1440)

    asker = page.context.browser.new_page(viewport={"width": 1440, "height": 1000})  # another session
    asker.set_default_timeout(60_000)
    try:
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
            timeout=MODEL_SECONDS
        )
        expect(asker.get_by_text(":material/hourglass_top:")).to_have_count(0)  # drawn as an icon, not as text
        box = asker.locator('[data-testid="stExpander"]', has_text="waiting:")
        expect(box.locator('[data-testid="stExpanderIconSpinner"]')).to_have_count(1)  # running: no tick yet
        expect(box.locator('[data-testid="stExpanderIconCheck"]')).to_have_count(0)
        shot(asker, "ask_waiting", 1440)
        shot(asker, "ask_waiting", 1024)
        lit = asker.locator('[data-testid="stGraphVizChart"] g.node', has_text="Clinician reasons")
        assert lit.locator("path, polygon").first.get_attribute("fill") == "#0f766e"  # the waiting call's stage
        page.get_by_role("button", name="Stop", exact=True).click()  # the benchmark: its four calls end
        expect(asker.get_by_text(re.compile(r"reading the prompt|writing")).first).to_be_visible(timeout=MODEL_SECONDS)
        asker.get_by_role("button", name="Stop", exact=True).click()
        expect(asker.get_by_text("CoT: stopped after")).to_be_visible(timeout=MODEL_SECONDS)
        no_error(asker, "Ask")
    finally:
        asker.close()
