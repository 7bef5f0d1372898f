"""The Benchmark page in the real app, in headless chromium at 1440 and 1024 px, on an OpenAI-compatible endpoint on
127.0.0.1 that bills tokens (its usage grows with the prompt, as a provider's does) and holds its replies until the
test has seen the benchmark mid-run: a non-JSON upload refused in place; CoT and MedRAG over a tiny MIRAGE-format file (two teaching cases in two datasets)
run in the background, shown mid-run and with results; a cell opened to its questions; the plots, the money axis
(a price set with `python -m core prices`) and the options each arm chose; the links to a run's trace (with its cost)
and to both runs side by side; the price list on Settings. Screenshots go to artifacts/screenshots/benchmark_*.png.

Real HTTP and real retrieval over the default corpus; the endpoint stands in for the model, because what is tested
here is the page. The same benchmark on the embedded model runs in ``tests/test_cli.py``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from core.engine.store import RunStore
from core.studio.pricing import Price, money, prices, run_cost
from core.studio.teaching import load_cases
from tests.e2e.conftest import CHROMIUM, open_page, scripted_env, settle, snap
from tests.e2e.conftest import choose as pick_in
from tests.e2e.serve import REPO, serve_app
from tests.e2e.waits import ms, until
from tests.fake_endpoint import FakeEndpoint, Step
from tests.waiting import Gate
from ui.benchmark.results import compare_link, history_link

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]
MODEL = "gpt-4o-mini"
PRICE = Price(model=MODEL, input_per_m=0.15, output_per_m=0.60)
WIDTHS = (1440, 1024)


@pytest.fixture(scope="module")
def tiny_bench(tmp_path_factory):
    cases = load_cases()
    bench = {
        name: {c.id: {"question": c.question, "options": c.options, "answer": c.answer} for c in group}
        for name, group in (("cases-a", cases[2:3]), ("cases-b", cases[6:7]))
    }
    path = tmp_path_factory.mktemp("bench") / "teaching_mini.json"
    path.write_text(json.dumps(bench))
    upload = path.with_name("notes.json")
    upload.write_text("these are notes, not JSON")
    return path, upload


def billing_endpoint(golds: dict[str, str], gate: Gate) -> FakeEndpoint:
    """Answers every call (MedRAG with the right letter, CoT with A) once ``gate`` lets it, and bills four characters
    a token."""

    def answer(request: dict) -> Step:
        sent = json.dumps(request)
        medrag = "cited_ids" in sent
        letter = next((g for q, g in golds.items() if q[:60] in sent), "A") if medrag else "A"
        reply = {
            "reasoning": "The documents point this way.",
            "answer": letter,
            **({"cited_ids": []} if medrag else {}),
        }
        text = json.dumps(reply)
        return Step(text=text, usage=(len(json.dumps(request["messages"])) // 4, len(text) // 4), gate=gate)

    return FakeEndpoint(script=answer)


@pytest.fixture(scope="module")
def app(tmp_path_factory, tiny_bench, gate):
    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's chromium at {CHROMIUM}")
    bench = json.loads(tiny_bench[0].read_text())
    golds = {q["question"]: q["answer"] for cases in bench.values() for q in cases.values()}
    endpoint = billing_endpoint(golds, gate)
    home = tmp_path_factory.mktemp("bench-home")
    done = subprocess.run(
        [sys.executable, "-m", "core", "prices", "set", MODEL, "--input", "0.15", "--output", "0.60"],
        cwd=REPO,
        env={"MEDRAG_STUDIO_HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=ms("app") / 1000,
    )
    assert done.returncode == 0 and done.stdout == f"{MODEL}: $0.15/$0.60 per M\n", done.stderr
    env = scripted_env(endpoint, tmp_path_factory.mktemp("no-model"), MODEL)
    with serve_app(home, env) as (url, _):
        yield url, home
    gate.open()
    endpoint.close()


def shots(page, name: str) -> None:
    for width in WIDTHS:
        settle(page)
        snap(page, f"benchmark_{name}_{width}", width=width)


def choose(page, testid: str, label: str, option: str) -> None:
    pick_in(page, page.locator(f'[data-testid="{testid}"]', has_text=label), option)


def test_benchmark_runs_in_the_background_and_shows_results_and_money(page, app, tiny_bench, gate):
    url, home = app
    bench, upload = tiny_bench
    open_page(page, f"{url}/benchmark", "Benchmark")
    page.get_by_text("An upload", exact=True).click()
    settle(page)
    page.locator('input[type="file"]').set_input_files(str(upload))
    page.get_by_text("notes.json is not readable JSON").wait_for()
    snap(page, "benchmark_01_bad_upload", width=WIDTHS[0])

    page.get_by_text("A path", exact=True).click()
    settle(page)
    path = page.get_by_label("Path", exact=True)
    path.fill(str(bench))
    path.press("Enter")
    settle(page)
    choose(page, "stMultiSelect", "Methods", "MedRAG")
    expect(page.locator('[data-testid="stMultiSelect"]', has_text="Methods")).to_contain_text("CoT")
    expect(page.get_by_text("2 questions × 2 arm(s) = 4 runs, 0 finished.")).to_be_visible()
    snap(page, "benchmark_02_setup", width=WIDTHS[0])

    page.get_by_role("button", name="Start", exact=True).click()
    # every call held at the endpoint (MedRAG's once its corpus is open): the benchmark mid-run, on any machine
    until(lambda: gate.held, "a benchmark call held at the endpoint", "index")
    page.get_by_text("0 of 2 questions").first.wait_for()
    expect(page.get_by_text("running", exact=True)).to_be_visible()
    snap(page, "benchmark_03_mid_run", width=WIDTHS[0])
    page.get_by_role("link", name="Ask").click()  # the rest of the studio stays usable meanwhile
    page.get_by_role("heading", name="Ask", level=1).wait_for()
    page.get_by_role("link", name="Benchmark").click()
    page.get_by_role("heading", name="Benchmark", level=1).wait_for()
    expect(page.get_by_text("running", exact=True)).to_be_visible()
    gate.open()
    page.get_by_text("finished", exact=True).wait_for(timeout=ms("index"))
    settle(page)
    shots(page, "04_results")

    store = RunStore(home / "studio.sqlite")
    rows = list(store.db["eval_items"].rows)
    assert len(rows) == 4 and {r["method"] for r in rows} == {"cot", "medrag"}
    assert {r["model"] for r in rows} == {MODEL} and all(r["status"] == "ok" for r in rows)
    costs = {r["method"]: [] for r in rows}
    for r in rows:
        costs[r["method"]].append(run_cost(store.load_run(r["run_id"]), prices(store)).amount)
    assert prices(store) == {MODEL: PRICE} and all(c > 0 for each in costs.values() for c in each)
    assert sum(costs["medrag"]) > sum(costs["cot"])  # MedRAG reads documents: it is billed more input

    choose(page, "stSelectbox", "Questions of", "MedRAG · cases-a")
    choose(page, "stSelectbox", "Compare with", "CoT")
    snap(page, "benchmark_05_cell_questions", width=WIDTHS[0])
    page.get_by_role("tab", name="Accuracy against cost").click()
    page.locator(".js-plotly-plot").nth(1).wait_for()
    # a segmented control's options are toggles, not buttons by role: picked by their text in the control
    page.locator('[data-testid="stButtonGroup"]', has_text="money").get_by_text("money", exact=True).click()
    settle(page)
    plot = page.locator(".js-plotly-plot", has_text="cost per question, USD (95% t-interval)")
    plot.wait_for()
    expect(plot).to_contain_text("MedRAG")
    expect(page.get_by_text("the horizontal bars are 95% t-intervals of the mean")).to_be_visible()
    plot.scroll_into_view_if_needed()
    shots(page, "06_money")
    page.get_by_role("tab", name="Paired tests").click()
    reading = re.compile(
        r"^(CoT|MedRAG) (and (CoT|MedRAG) are not distinguishable|is more accurate than "
        r"(CoT|MedRAG)) on these 2 questions"
    )
    expect(page.get_by_text(reading)).to_be_visible()
    snap(page, "benchmark_07_pairs", width=WIDTHS[0])
    page.get_by_role("tab", name="Options chosen").click()
    expect(page.get_by_text("Each option: times the arm chose it / times it was the right answer")).to_be_visible()

    # the links the questions table carries open the run's trace (with its cost) and both runs side by side
    by_arm = {(r["method"], r["qid"]): r["run_id"] for r in rows}
    qid = sorted(q for _, q in by_arm)[0]
    run_id = by_arm[("medrag", qid)]
    cost = run_cost(store.load_run(run_id), prices(store))
    open_page(page, url + history_link(run_id), "History")
    expect(page.get_by_text(f"Run {run_id} ·")).to_be_visible()
    line = page.get_by_text(re.compile("Cost " + re.escape(money(cost.amount, "USD")) + " · "))
    expect(line).to_contain_text(f"Cost {cost.basis()} ({MODEL})")
    line.scroll_into_view_if_needed()
    shots(page, "08_history_trace")
    open_page(page, url + compare_link(by_arm[("cot", qid)], run_id), "Compare")
    expect(page.locator(".lane-method")).to_have_text(["CoT", "MedRAG"])
    shots(page, "09_compare")

    open_page(page, f"{url}/settings", "Settings")
    page.get_by_role("tab", name="Model prices").click()
    settle(page)
    panel = page.get_by_role("tabpanel").filter(has_text="What your provider charges per million tokens")
    expect(panel.get_by_test_id("stDataFrame")).to_be_visible()  # the table draws on a canvas: see the shot
    expect(page.get_by_text("Used without a price")).to_have_count(0)
    shots(page, "10_settings_prices")
