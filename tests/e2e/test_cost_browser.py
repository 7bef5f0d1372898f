"""Cost in money in the real app, in headless chromium at 1440 and 1024 px: a price set with `python -m core prices`,
then CoT and MedRAG over a tiny MIRAGE-format file on an OpenAI-compatible endpoint on 127.0.0.1 that bills tokens
(its usage grows with the prompt, as a provider's does), the Benchmark's money axis, and a run's cost on its trace
(History) and beside the other method's (Compare). Screenshots go to artifacts/screenshots/cost_*.png.

The endpoint answers at once (real HTTP, real retrieval over the default corpus), so the whole path takes seconds.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from core.pricing import Price, money, prices, run_cost
from core.store import RunStore
from tests.e2e.conftest import CHROMIUM, open_page, settle, snap
from tests.e2e.serve import REPO, serve_app
from tests.e2e.test_benchmark_browser import choose, tiny_bench  # noqa: F401 (a fixture)
from tests.fake_endpoint import FakeEndpoint, Step

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]
MODEL = "gpt-4o-mini"
PRICE = Price(model=MODEL, input_per_m=0.15, output_per_m=0.60)
WIDTHS = (1440, 1024)
RUN_MS = 180_000  # the endpoint answers at once: four runs take seconds


def billing_endpoint(golds: dict[str, str]) -> FakeEndpoint:
    """Answers every call (MedRAG with the right letter, CoT with A) and bills four characters a token."""

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
        return Step(text=text, usage=(len(json.dumps(request["messages"])) // 4, len(text) // 4))

    return FakeEndpoint(script=answer)


@pytest.fixture(scope="module")
def app(tmp_path_factory, tiny_bench):  # noqa: F811
    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's chromium at {CHROMIUM}")
    bench = json.loads(tiny_bench[0].read_text())
    endpoint = billing_endpoint({q["question"]: q["answer"] for cases in bench.values() for q in cases.values()})
    home = tmp_path_factory.mktemp("cost-home")
    done = subprocess.run(
        [sys.executable, "-m", "core", "prices", "set", MODEL, "--input", "0.15", "--output", "0.60"],
        cwd=REPO,
        env={"MEDRAG_STUDIO_HOME": str(home), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout == f"{MODEL}: $0.15/$0.60 per M\n", done.stderr
    with serve_app(home, {"MEDRAG_BASE_URL": endpoint.url, "MEDRAG_MODEL": MODEL, "MEDRAG_CACHE": "off"}) as (url, _):
        yield url, home
    endpoint.close()


def shots(page, name: str) -> None:
    for width in WIDTHS:
        settle(page)
        snap(page, f"cost_{name}_{width}", width=width)


def test_money_on_the_benchmark_axis_on_the_trace_and_in_compare(page, app, tiny_bench):  # noqa: F811
    url, home = app
    open_page(page, f"{url}/benchmark", "Benchmark")
    page.get_by_text("Default corpus index ready").wait_for(timeout=RUN_MS)  # built in the background at start
    page.get_by_text("A path", exact=True).click()
    settle(page)
    path = page.get_by_label("Path", exact=True)
    path.fill(str(tiny_bench[0]))
    path.press("Enter")
    settle(page)
    choose(page, "stMultiSelect", "Methods", "MedRAG")
    expect(page.get_by_text("2 questions × 2 arm(s) = 4 runs, 0 finished.")).to_be_visible()
    snap(page, "cost_benchmark_setup", width=WIDTHS[0])
    page.get_by_role("button", name="Start", exact=True).click()
    page.get_by_text("finished", exact=True).wait_for(timeout=RUN_MS)
    settle(page)

    store = RunStore(home / "studio.sqlite")
    rows = list(store.db["eval_items"].rows)
    assert len(rows) == 4 and {r["model"] for r in rows} == {MODEL} and all(r["status"] == "ok" for r in rows)
    costs = {r["method"]: [] for r in rows}
    for r in rows:
        costs[r["method"]].append(run_cost(store.load_run(r["run_id"]), prices(store)).amount)
    assert prices(store) == {MODEL: PRICE} and all(c > 0 for each in costs.values() for c in each)
    assert sum(costs["medrag"]) > sum(costs["cot"])  # MedRAG reads documents: it is billed more input

    page.get_by_role("tab", name="Accuracy against cost").click()
    # a segmented control's options are toggles, not buttons by role: picked by their text in the control
    page.locator('[data-testid="stButtonGroup"]', has_text="money").get_by_text("money", exact=True).click()
    settle(page)
    plot = page.locator(".js-plotly-plot", has_text="cost per question, USD (95% t-interval)")
    plot.wait_for()
    expect(plot).to_contain_text("MedRAG")
    expect(page.get_by_text("the horizontal bars are 95% t-intervals of the mean")).to_be_visible()
    plot.scroll_into_view_if_needed()
    shots(page, "benchmark_money")

    run_id = next(r["run_id"] for r in rows if r["method"] == "medrag")
    run = store.load_run(run_id)
    cost = run_cost(run, prices(store))
    open_page(page, f"{url}/history?run={run_id}", "History")
    line = page.get_by_text(re.compile("Cost " + re.escape(money(cost.amount, "USD")) + " · "))
    expect(line).to_contain_text(f"Cost {cost.basis()} ({MODEL})")
    line.scroll_into_view_if_needed()
    shots(page, "history_trace")

    qid = next(r["qid"] for r in rows if r["run_id"] == run_id)
    other = next(r["run_id"] for r in rows if r["method"] == "cot" and r["qid"] == qid)
    open_page(page, f"{url}/compare?runs={other},{run_id}", "Compare")
    shots(page, "compare")

    open_page(page, f"{url}/settings", "Settings")
    page.get_by_role("tab", name="Model prices").click()
    settle(page)
    expect(page.get_by_text("What your provider charges per million tokens")).to_be_visible()
    panel = page.get_by_role("tabpanel").filter(has_text="What your provider charges")
    expect(panel.get_by_test_id("stDataFrame")).to_be_visible()  # the table draws on a canvas: see the shot
    expect(page.get_by_text("Used without a price")).to_have_count(0)
    shots(page, "settings_prices")
