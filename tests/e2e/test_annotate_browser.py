"""Two annotators judge the same pool at once in headless chromium: two browser contexts, two names, blind mode
(each sees only their own labels), one by keys 0-3 and one by clicks; then agreement and metrics appear.

The store is seeded with real saved runs: MedRAG and MASS-RAG over the real teaching-pack index, their replies
scripted (the labels are the point here, not the model). Screenshots (1440 px wide) go to artifacts/screenshots/.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.test_browser import CHROMIUM, CHROMIUM_ARGS, REPO, SHOTS, _free_port

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]
WIDTH = 1440


def seed(home: Path) -> dict[str, str]:
    """Saved runs of one teaching case; returns each pooled passage's text -> its role in the teaching pack."""
    os.environ["MEDRAG_STUDIO_HOME"] = str(home)
    from core.retrieval import open_retriever
    from core.runner import execute
    from core.store import RunStore
    from core.teaching import PACK_DIR, load_cases, load_passages
    from tests.fakes import ScriptedLLM

    case = next(c for c in load_cases() if c.id == "stemi")
    retriever = open_retriever([PACK_DIR / "passages.jsonl"])
    store = RunStore(home / "studio.sqlite")
    medrag = ScriptedLLM().enqueue({"reasoning": "Inferior STEMI: reperfusion now.", "answer": "B", "cited_ids": []})
    mass = (ScriptedLLM().on("You are the Summarizer.", {"summary": "Reperfusion is urgent.", "doc_ids": []})
            .on("You are the Extractor.", {"spans": []})
            .on("You are the Reasoner.", {"inference": "Primary PCI fits.", "doc_ids": []})
            .on("You are the Synthesis Agent.", {"reasoning": "B.", "answer": "B", "cited_ids": [],
                                                  "followed_view": "Reasoner"}))
    for method, llm, params in (("medrag", medrag, {"k": 5}), ("mass", mass, {"k": 4})):
        run = execute(method, case.to_question(), params, llm=llm, retriever=retriever, store=store)
        assert run.status == "ok", run.events[-1]
    return {p.contents: p.role if p.case_id == case.id else "other case" for p in load_passages()}


GRADES = {"ann": {"key": 3, "near_miss": 1, "outdated": 2, "other case": 0},
          "bob": {"key": 3, "near_miss": 0, "outdated": 2, "other case": 0}}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's chromium at {CHROMIUM}")
    home = tmp_path_factory.mktemp("annotate-home")
    saved = os.environ.get("MEDRAG_STUDIO_HOME")
    roles = seed(home)
    env = {k: v for k, v in os.environ.items() if k not in ("MEDRAG_BASE_URL", "MEDRAG_MODEL", "MEDRAG_API_KEY")}
    env["MEDRAG_STUDIO_HOME"] = str(home)
    if saved is not None:
        os.environ["MEDRAG_STUDIO_HOME"] = saved
    port = _free_port()
    log = open(home / "streamlit.log", "w")
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("streamlit")), "run", "streamlit_app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1"], cwd=REPO, env=env, stdout=log,
        stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{url}/_stcore/health", timeout=1)
            break
        except OSError:
            time.sleep(0.3)
    else:
        server.terminate()
        pytest.fail(f"the app did not start: {(home / 'streamlit.log').read_text()[-2000:]}")
    yield url, home, roles
    server.terminate()
    server.wait(timeout=30)
    log.close()


def settle(page) -> None:
    page.wait_for_timeout(250)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=30_000)


def snap(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate("document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
    page.set_viewport_size({"width": WIDTH, "height": max(900, min(height, 8000))})
    page.wait_for_timeout(600)
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    page.set_viewport_size({"width": WIDTH, "height": 900})


def start(browser, url: str, name: str):
    page = browser.new_context(viewport={"width": WIDTH, "height": 900}).new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{url}/annotate")
    page.get_by_role("heading", name="Annotate", level=1).wait_for()
    page.get_by_label("Your name (stored with every label)").fill(name)
    page.get_by_role("button", name="Start labelling").click()
    page.get_by_text(f"Labelling as {name}").wait_for()
    settle(page)
    return page


def passage(page) -> tuple[int, int, str]:
    card = page.locator(".snip.judge")
    head = card.locator(".tag.rank").inner_text()  # "Passage n of N"
    number, total = (int(w) for w in head.split()[1::2])
    return number, total, card.locator(".full").inner_text()


def labels_of(home: Path, who: str) -> dict[str, tuple[int, str]]:
    from core.labels import LabelStore

    return {r["snippet_id"]: (r["grade"], r["note"]) for r in LabelStore(home / "studio.sqlite").labels()
            if r["annotator"] == who}


def test_two_annotators_judge_blind_at_once_then_agreement_and_metrics_appear(app):
    from playwright.sync_api import sync_playwright

    url, home, roles = app
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        ann, bob = start(browser, url, "ann"), start(browser, url, "bob")
        _, total, _ = passage(ann)
        expect(ann.locator(".snip.judge")).not_to_contain_text("medrag")
        snap(ann, "annotate_01_blind_ann")

        # typing a note with digits in it gives no grade: the keys only grade outside the note field
        note = ann.get_by_label("Note (optional; saved with the grade)")
        note.click()
        note.press_sequentially("ST elevation 2 mm, 3 leads")
        note.press("Enter")
        settle(ann)
        assert labels_of(home, "ann") == {}
        orders = {"ann": [], "bob": []}
        for step in range(total):
            for who, page in (("ann", ann), ("bob", bob)):  # the two interleave: the same pool, at once
                number, _, text = passage(page)
                orders[who].append(text)
                grade = GRADES[who][roles.get(text, "other case")]
                if who == "ann":
                    page.locator(".snip.judge").click()  # focus out of any field, then the key
                    page.keyboard.press(str(grade))
                else:
                    page.get_by_role("button", name=f"{grade} · ", exact=False).first.click()
                settle(page)
                if step == 0 and who == "bob":
                    # bob sees none of ann's labels, only his own count
                    expect(bob.get_by_text(f"1 of {total} passages of this question judged by you")).to_be_visible()
                    expect(bob.locator(".snip.judge")).not_to_contain_text("labels:")
                    snap(bob, "annotate_02_blind_bob")
        assert orders["ann"] != orders["bob"]  # each annotator's own shuffle
        assert len(labels_of(home, "ann")) == len(labels_of(home, "bob")) == total
        assert "ST elevation 2 mm, 3 leads" in {n for _, n in labels_of(home, "ann").values()}
        expect(ann.get_by_text("You have judged every passage of this question.")).to_be_visible()

        ann.get_by_role("tab", name="Agreement").click()
        expect(ann.get_by_text("Linear-weighted Cohen's kappa per pair")).to_be_visible()
        ann.locator('[data-testid="stDataFrame"]').first.wait_for()
        snap(ann, "annotate_03_agreement")
        ann.get_by_role("tab", name="Metrics").click()
        ann.locator(".js-plotly-plot").first.wait_for()
        expect(ann.get_by_text("runs scored")).to_be_visible()
        snap(ann, "annotate_04_metrics")
        ann.get_by_role("tab", name="Judge").click()
        ann.get_by_text("Open mode").click()
        settle(ann)
        expect(ann.locator(".snip.judge")).to_contain_text("shown by")
        snap(ann, "annotate_05_open_mode")

        ann.get_by_role("link", name="History").click()  # in-app navigation keeps the session, and the name
        ann.get_by_role("heading", name="History", level=1).wait_for()
        ann.get_by_role("tab", name="Labels").click()
        expect(ann.get_by_text("documents judged by someone")).to_be_visible()
        expect(ann.get_by_text("2× 3 key").first).to_be_visible()  # both annotators' labels, counted per grade
        snap(ann, "annotate_06_trace_labels")
        browser.close()
