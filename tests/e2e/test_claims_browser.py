"""A paper's claim checked through the whole Benchmark page in headless chromium, on an OpenAI-compatible endpoint on
127.0.0.1 that answers MedRAG right and CoT wrong and holds its replies until the test has seen the check mid-run:
the claim and the paper's figures, the questions a paired test needs (more than the benchmark holds, said so)
before anything runs, the check as a background job, then each arm's accuracy, the paired difference and the
verdict "consistent with the paper", with what differs from the paper's setup and the report to download.
Screenshots at 1440 and 1024 px go to artifacts/screenshots/claims_*.png.

Real HTTP and real retrieval over the default corpus; the endpoint stands in for the model, because what is tested
here is the page. The claim checked on the embedded model is ``benchmarks/claim_check.py``'s (docs/claims.md).
"""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from core.engine.store import RunStore
from core.studio.claims import get_claim, sample_size
from core.studio.teaching import load_cases
from tests.e2e.conftest import CHROMIUM, open_page, pick, scripted_env, settle, snap
from tests.e2e.serve import serve_app
from tests.e2e.waits import ms, until
from tests.fake_endpoint import FakeEndpoint, Step
from tests.waiting import Gate

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]
WIDTHS = (1440, 1024)
CLAIM = "medrag-vs-cot"
QUESTIONS = 8  # MedRAG right and CoT wrong on all: exact McNemar p = 2 / 2^8, under 0.05


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    cases = load_cases()[:QUESTIONS]
    data = {"medqa": {c.id: {"question": c.question, "options": c.options, "answer": c.answer} for c in cases}}
    path = tmp_path_factory.mktemp("claims-bench") / "mirage_mini.json"
    path.write_text(json.dumps(data))
    return path, {c.question: c.answer for c in cases}


def judging_endpoint(golds: dict[str, str], gate: Gate) -> FakeEndpoint:
    """MedRAG (its reply schema asks for cited ids) answers each question right, CoT wrong; every reply waits at
    ``gate``."""

    def answer(request: dict) -> Step:
        sent = json.dumps(request)
        gold = next((g for q, g in golds.items() if json.dumps(q[:60])[1:-1] in sent), "A")
        medrag = "cited_ids" in sent
        letter = gold if medrag else ("A" if gold != "A" else "B")
        reply = {"reasoning": "From what the documents say.", "answer": letter, **({"cited_ids": []} if medrag else {})}
        text = json.dumps(reply)
        return Step(text=text, usage=(len(sent) // 4, len(text) // 4), gate=gate)

    return FakeEndpoint(script=answer)


@pytest.fixture(scope="module")
def app(tmp_path_factory, bench, gate):
    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's chromium at {CHROMIUM}")
    endpoint = judging_endpoint(bench[1], gate)
    home = tmp_path_factory.mktemp("claims-home")
    env = scripted_env(endpoint, tmp_path_factory.mktemp("no-model"), "gpt-4o-mini")
    with serve_app(home, env) as (url, _):
        yield url, home
    gate.open()
    endpoint.close()


def test_a_claim_is_checked_through_the_page(page, app, bench, gate):
    url, home = app
    open_page(page, f"{url}/benchmark", "Benchmark")
    page.get_by_text("Check a paper's claim", exact=True).click()
    settle(page)
    pick(page, "Claim", f"{CLAIM} · cot vs medrag")
    claim = get_claim(CLAIM)
    expect(page.get_by_text(claim.claim)).to_be_visible()
    path = page.get_by_label("Path", exact=True)
    path.fill(str(bench[0]))
    path.press("Enter")
    settle(page)
    needed = sample_size(claim, datasets=["medqa"]).needed
    expect(page.get_by_test_id("stMetric").first).to_contain_text(f"{needed:,}")
    expect(
        page.get_by_text(f"These datasets hold {QUESTIONS} questions, fewer than the {needed:,} needed.")
    ).to_be_visible()
    assert not RunStore(home / "studio.sqlite").list_runs()  # sized, nothing spent

    page.get_by_role("button", name="Check this claim").click()
    until(lambda: gate.held, "a call of the check held at the endpoint", "index")
    page.get_by_text(f"0 of {QUESTIONS} questions").first.wait_for()
    snap(page, "claims_01_mid_run", width=WIDTHS[0])
    gate.open()
    verdict = page.get_by_text("Consistent with the paper: medrag is ahead here too")
    verdict.wait_for(timeout=ms("index"))
    settle(page)
    table = page.get_by_test_id("stDataFrame").first
    expect(table).to_be_visible()
    expect(page.get_by_text(f"Paired difference (medrag − cot) on {QUESTIONS} questions: +100.0%")).to_be_visible()
    expect(page.get_by_text("exact McNemar p = 0.008")).to_be_visible()
    expect(page.get_by_role("button", name="Report (Markdown)")).to_be_visible()
    expect(page.get_by_role("button", name="Every question's run (run file)")).to_be_visible()
    rows = list(RunStore(home / "studio.sqlite").db["eval_items"].rows)
    assert len(rows) == 2 * QUESTIONS and {r["method"] for r in rows} == {"cot", "medrag"}
    assert sum(r["correct"] for r in rows if r["method"] == "medrag") == QUESTIONS
    assert not any(r["correct"] for r in rows if r["method"] == "cot")
    for width in WIDTHS:
        settle(page)
        snap(page, f"claims_02_verdict_{width}", width=width)
