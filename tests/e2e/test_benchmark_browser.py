"""The Benchmark page in the real app on the embedded model, in headless chromium at 1440 px: a non-JSON upload
refused in place, then CoT and MedRAG over a tiny MIRAGE-format file (two teaching cases in two datasets) run in
the background, shown mid-run and with results, a cell opened to its questions, the plots, and the options each
arm chose. Screenshots go to artifacts/screenshots/benchmark_*.png.

Budgets are small (answers of at most 160 tokens, MedRAG reads 3 snippets within 800 characters), so the whole
benchmark is 4 short runs.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from playwright.sync_api import expect

from core.teaching import load_cases
from tests.e2e.conftest import MODEL_SECONDS, choose as pick_in, open_page, set_number, settle, snap
from ui.bench_results import compare_link, history_link

pytestmark = [pytest.mark.browser, pytest.mark.timeout(1800)]
WIDTH = 1440


@pytest.fixture(scope="module")
def tiny_bench(tmp_path_factory):
    cases = load_cases()
    bench = {name: {c.id: {"question": c.question, "options": c.options, "answer": c.answer} for c in group}
             for name, group in (("cases-a", cases[2:3]), ("cases-b", cases[6:7]))}
    path = tmp_path_factory.mktemp("bench") / "teaching_mini.json"
    path.write_text(json.dumps(bench))
    upload = path.with_name("notes.json")
    upload.write_text("these are notes, not JSON")
    return path, upload


def shot(page, name: str) -> None:
    snap(page, f"benchmark_{name}", width=WIDTH)


def choose(page, testid: str, label: str, option: str) -> None:
    pick_in(page, page.locator(f'[data-testid="{testid}"]', has_text=label), option)


def knobs(page, method: str, values: dict[str, int]) -> None:
    expander = page.locator('[data-testid="stExpander"]', has_text=f"{method} knobs")
    expander.get_by_text(f"{method} knobs").click()
    for label, value in values.items():
        set_number(expander, label, value)
        settle(page)


def test_benchmark_runs_in_the_background_and_shows_results(page, app, tiny_bench):
    url, home = app
    bench, upload = tiny_bench
    page.set_viewport_size({"width": WIDTH, "height": 1000})
    open_page(page, f"{url}/benchmark", "Benchmark")
    page.get_by_text("An upload", exact=True).click()
    settle(page)
    page.locator('input[type="file"]').set_input_files(str(upload))
    page.get_by_text("notes.json is not readable JSON").wait_for()
    shot(page, "01_bad_upload")

    page.get_by_text("A path", exact=True).click()
    settle(page)
    path = page.get_by_label("Path", exact=True)
    path.fill(str(bench))
    path.press("Enter")
    settle(page)
    choose(page, "stMultiSelect", "Methods", "MedRAG")
    # the default method survives clicks that interrupt the page's first, slow run on a cold server
    expect(page.locator('[data-testid="stMultiSelect"]', has_text="Methods")).to_contain_text("CoT")
    knobs(page, "CoT", {"Max tokens": 160})
    knobs(page, "MedRAG", {"K": 3, "Max doc chars": 800, "Max tokens": 160})
    expect(page.get_by_text("2 questions × 2 arm(s) = 4 runs, 0 finished.")).to_be_visible()

    started = time.perf_counter()
    page.get_by_role("button", name="Start", exact=True).click()
    page.get_by_text(re.compile(r"[01] of 2 questions")).first.wait_for(timeout=MODEL_SECONDS)
    expect(page.get_by_text("running", exact=True)).to_be_visible()
    shot(page, "02_mid_run")
    page.get_by_role("link", name="Ask").click()  # the rest of the studio stays usable meanwhile
    page.get_by_role("heading", name="Ask", level=1).wait_for()
    page.get_by_role("link", name="Benchmark").click()
    page.get_by_role("heading", name="Benchmark", level=1).wait_for()
    page.get_by_text("finished", exact=True).wait_for(timeout=MODEL_SECONDS)
    settle(page)
    seconds = time.perf_counter() - started
    shot(page, "03_results")

    from core.store import RunStore

    rows = list(RunStore(home / "studio.sqlite").db["eval_items"].rows)
    assert len(rows) == 4 and {r["method"] for r in rows} == {"cot", "medrag"}
    assert all(r["status"] in ("ok", "error") for r in rows)

    choose(page, "stSelectbox", "Questions of", "MedRAG · cases-a")
    choose(page, "stSelectbox", "Compare with", "CoT")
    shot(page, "04_cell_questions")
    page.get_by_role("tab", name="Accuracy against cost").click()
    page.locator(".js-plotly-plot").nth(1).wait_for()
    shot(page, "05_cost")
    page.get_by_role("tab", name="Paired tests").click()
    page.locator(".js-plotly-plot").nth(2).wait_for()
    reading = re.compile(r"^(CoT|MedRAG) (and (CoT|MedRAG) are not distinguishable|is more accurate than "
                         r"(CoT|MedRAG)) on these 2 questions")
    expect(page.get_by_text(reading)).to_be_visible()
    shot(page, "06_pairs")
    page.get_by_role("tab", name="Options chosen").click()
    expect(page.get_by_text("Each option: times the arm chose it / times it was the right answer")).to_be_visible()
    shot(page, "06_options_chosen")
    print(f"benchmark of 4 runs shown as finished after {seconds:.0f} s")

    # the links the questions table carries open the run's trace in History and both runs side by side in Compare
    by_arm = {(r["method"], r["qid"]): r["run_id"] for r in rows}
    qid = sorted(q for _, q in by_arm)[0]
    open_page(page, url + history_link(by_arm[("medrag", qid)]), "History")
    expect(page.get_by_role("heading", name=re.compile("MedRAG"))).to_be_visible()
    expect(page.get_by_text(f"Run {by_arm[('medrag', qid)]} ·")).to_be_visible()
    open_page(page, url + compare_link(by_arm[("cot", qid)], by_arm[("medrag", qid)]), "Compare")
    expect(page.locator(".lane-method")).to_have_text(["CoT", "MedRAG"])
    shot(page, "07_compare_link")
