"""The studio served in shared mode, driven in headless chromium by the owner and two visitors at once (three browser
contexts, one real server, one real SQLite file): what each is offered, the owner's sign-in and allowance, a run file
of 10 MB of letters refused at once, a label file naming another annotator refused, and a live room whose presenter
token never reaches the address bar while a participant sees only the room. And the key-leak probe: the server is
configured with an endpoint and its key (a fake server on one loopback port); a fake server on another port receives
requests from the owner's Settings and Ask and from every page a visitor can reach, and none carries that key.

Screenshots of the owner's and a visitor's views at 1440 and 1024 px go to artifacts/screenshots/serve-*.png.
"""

from __future__ import annotations

import gzip
import json
import time

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import CHROMIUM, new_page, settle
from tests.e2e.conftest import snap as snap_page
from tests.e2e.serve import serve_app
from tests.e2e.waits import until

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]
PASSCODE = "correct-horse-battery"
SECRET = "sk-server-owned-0123456789"  # the server's MEDRAG_API_KEY, for its own endpoint only
PAGES = ("ask", "compare", "workshop", "history", "annotate", "benchmark", "settings", "workshop?room=ABCDEF")


@pytest.fixture(scope="module")
def shared_app(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's chromium at {CHROMIUM} (apt-get install chromium, or `make browser`)")
    from core.engine.question import Question
    from core.engine.runner import execute
    from core.engine.store import RunStore
    from core.studio.runfiles import export_runs
    from tests.fake_endpoint import FakeEndpoint, streams
    from tests.fakes import ListRetriever, ScriptedLLM, make_hits

    home = tmp_path_factory.mktemp("shared-home")
    store = RunStore(home / "studio.sqlite")
    llm = ScriptedLLM().enqueue({"reasoning": "Doc 1 says so.", "answer": "B", "cited_ids": ["teaching-1"]})
    run = execute(
        "medrag",
        Question(text="Which drug treats disease 1?", options={"A": "aspirin", "B": "metformin"}),
        llm=llm,
        retriever=ListRetriever(make_hits(3)),
        store=store,
    )
    document = json.loads(export_runs(store, [run.id]).model_dump_json())
    document["runs"][0]["run"]["id"] = "letters"
    for event in document["runs"][0]["run"]["events"]:
        event["run_id"] = "letters"
    document["runs"][0]["run"]["events"][-1]["payload"]["rationale"] = "a" * 10_000_000
    (home / "letters.json.gz").write_bytes(gzip.compress(json.dumps(document).encode()))
    (home / "nested.json.gz").write_bytes(gzip.compress(b"[" * 200_000))  # raised RecursionError out of the decoder
    (home / "bobs.csv").write_text("question_id,snippet_id,annotator,grade\nq/x,s1,Ana,2\nq/x,s2,bob,3\n")
    ours = FakeEndpoint(streams('{"ready": "yes", "model": "ours"}'), models=("ours-model",))
    theirs = FakeEndpoint(streams('{"ready": "yes", "model": "theirs"}'), models=("their-model",))
    env = {
        "MEDRAG_MODE": "shared",
        "MEDRAG_OWNER_PASSCODE": PASSCODE,
        "MEDRAG_BASE_URL": ours.url,
        "MEDRAG_MODEL": "ours-model",
        "MEDRAG_API_KEY": SECRET,
        "MEDRAG_MAX_RETRIES": "0",
    }
    try:
        with serve_app(home, env) as (url, _):
            yield url, home, ours, theirs
    finally:
        ours.close()
        theirs.close()


def snap(page, name: str, width: int) -> None:
    snap_page(page, f"serve-{name}-{width}", width)


def open_page(browser, url: str, path: str, heading: str | None):
    page = new_page(browser, 1440)
    page.goto(f"{url}/{path}")
    if heading:
        page.get_by_role("heading", name=heading, level=1).wait_for()
    settle(page)
    return page


def nav(page) -> list[str]:
    return [text.split("\n")[-1] for text in page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()]


def sign_in(page, passcode: str) -> None:
    box = page.get_by_label("Owner's passcode")
    if not box.is_visible():  # the popover stays open after a wrong passcode
        page.get_by_role("button", name="Sign in as the owner").click()
    box.fill(passcode)
    page.get_by_role("button", name="Sign in", exact=True).click()
    settle(page)


def go(page, title: str) -> None:
    """To another page through the navigation, keeping the browser session (a new page load would start a new one,
    signed out)."""
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).click()
    page.get_by_role("heading", name=title, level=1).wait_for()
    settle(page)


def test_owner_and_visitors_on_one_shared_server(shared_app, browser, timings):
    url, home, _, _ = shared_app
    visitor = open_page(browser, url, "ask", "Ask")
    sidebar = visitor.locator('[data-testid="stSidebar"]')
    expect(sidebar).to_contain_text("Visitor")
    expect(sidebar).to_contain_text("label snippets under your own name")
    assert [t for t in nav(visitor) if t in ("Settings", "Benchmark")] == []
    assert {"Ask", "Compare", "Workshop", "History", "Annotate"} <= set(nav(visitor))
    expect(visitor.get_by_text("The owner has not opened live runs to visitors")).to_be_visible()
    expect(visitor.get_by_role("button", name="Run", exact=True)).to_be_disabled()
    expect(visitor.get_by_text("Runs on the embedded model")).to_be_visible()  # not the owner's endpoint, unnamed
    assert shared_app[2].url not in visitor.content()
    for width in (1440, 1024):
        snap(visitor, "visitor-ask", width)

    owner = open_page(browser, url, "history", "History")
    sign_in(owner, "not-the-passcode")
    expect(owner.get_by_text("That is not the owner's passcode.")).to_be_visible()
    sign_in(owner, PASSCODE)
    expect(owner.locator('[data-testid="stSidebar"]')).to_contain_text("Owner · signed in with the passcode")
    settle(owner)
    assert {"Settings", "Benchmark"} <= set(nav(owner))

    # the masking test: 10 MB of letters in one field, gzip-compressed to a few KB, refused at once by name
    owner.get_by_text("Run files: download runs, or import a file").click()
    began = time.perf_counter()
    owner.locator('input[type="file"]').set_input_files(str(home / "letters.json.gz"))
    expect(owner.get_by_text("is 10,000,000 characters long; a text in a run may be at most 100,000")).to_be_visible()
    timings["letters_refused_s"] = round(time.perf_counter() - began, 2)
    expect(owner.get_by_text("Nothing was imported.")).to_be_visible()
    # nesting too deep for the decoder: said by its place, and the uploader stays for the next file
    owner.locator('input[type="file"]').set_input_files(str(home / "nested.json.gz"))
    expect(owner.get_by_text("nests lists and objects more than 32 deep, from line 1, column 33")).to_be_visible()
    expect(owner.locator('input[type="file"]')).to_have_count(1)
    assert owner.get_by_text("RecursionError").count() == 0

    owner.get_by_text("What visitors may do").click()
    owner.get_by_text("Live runs", exact=True).click()  # the owner allows it
    settle(owner)
    visitor.reload()
    visitor.get_by_role("heading", name="Ask", level=1).wait_for()
    settle(visitor)
    expect(visitor.get_by_role("button", name="Run", exact=True)).to_be_enabled()
    expect(visitor.locator('[data-testid="stSidebar"]')).to_contain_text("run methods live on the embedded model")

    # a label file that names another annotator: refused, saying whose labels it would have changed
    annotator = open_page(browser, url, "annotate", "Annotate")
    annotator.get_by_label("Your name (stored with every label)").fill("Ana")
    annotator.get_by_role("button", name="Start labelling").click()
    annotator.get_by_text("Labelling as Ana").wait_for()
    annotator.get_by_role("tab", name="Export and import").click()
    expect(annotator.get_by_text("Only the studio's owner can export everyone's labels.")).to_be_visible()
    annotator.locator('input[type="file"]').set_input_files(str(home / "bobs.csv"))
    annotator.get_by_role("button", name="Import", exact=True).click()
    expect(
        annotator.get_by_text("This file holds labels that are not Ana's: bob's labels (1 new, 0 changed)")
    ).to_be_visible()
    from core.studio.labels import LabelStore

    assert LabelStore(home / "studio.sqlite").labels() == []
    for width in (1440, 1024):
        snap(annotator, "visitor-annotate-import-refused", width)

    # a live room: the presenter's token stays out of the address bar; a participant sees only the room
    go(owner, "Workshop")
    owner.get_by_role("button", name="Open a live room with these runs").click()
    owner.get_by_text("Scan to join").wait_for()
    settle(owner)
    code = owner.url.split("room=")[1][:6]
    assert "presenter" not in owner.url and owner.url.endswith(f"room={code}")
    expect(owner.get_by_text(f"/workshop?room={code}").first).to_be_visible()
    participant = open_page(browser, url, f"workshop?room={code}", None)
    participant.get_by_label("Your name").fill("Ada")
    participant.get_by_role("button", name="Join", exact=True).click()
    participant.get_by_text("you are Ada in room").wait_for()
    settle(participant)
    expect(participant.locator('[data-testid="stSidebarNav"]')).to_have_count(0)
    assert "presenter" not in participant.url
    owner.get_by_role("button", name="Reveal the answer", exact=True).click()  # CoT: the question, then this
    expect(participant.get_by_text("Step 1 of 1")).to_be_visible()
    for width in (1440, 1024):
        snap(owner, "owner-presenter", width)
        snap(participant, "visitor-participant", width)
    go(owner, "History")
    for width in (1440, 1024):
        snap(owner, "owner-history", width)
    for page in (visitor, owner, annotator, participant):
        page.context.close()


def carries(server, secret: str) -> bool:
    """Whether any request the fake server received held ``secret``: in a header, its body, or its path."""
    return (
        any(secret in f"{h}" for h in server.headers)
        or any(secret in json.dumps(r) for r in server.requests)
        or any(secret in path for path in server.paths)
    )


def test_no_page_sends_the_servers_key_to_another_server(shared_app, browser):
    from tests.e2e.conftest import button, pick

    url, _, ours, theirs = shared_app
    owner = open_page(browser, url, "history", "History")
    sign_in(owner, PASSCODE)
    go(owner, "Settings")
    owner.get_by_role("button", name="Test the connection").click()
    expect(owner.get_by_text("answered a structured reply")).to_be_visible()
    assert carries(ours, SECRET)  # the probe sees the key where it belongs: it would see it anywhere else

    base = owner.get_by_role("textbox", name="Base URL")
    base.fill(theirs.url)
    base.press("Enter")
    settle(owner)
    expect(
        owner.get_by_role("textbox", name="API key for this endpoint")
    ).to_be_visible()  # the server's key is not offered
    owner.get_by_role("button", name="List the endpoint's models").click()
    settle(owner)
    owner.get_by_role("button", name="Test the connection").click()
    expect(owner.get_by_text("answered a structured reply")).to_be_visible()
    go(owner, "Ask")
    pick(owner, "Start from a teaching case", "Cardiology · Acute inferior ST-elevation myocardial infarction")
    button(owner, "Run").click()
    owner.get_by_text("CoT:").first.wait_for()
    settle(owner)
    until(lambda: len(theirs.paths) >= 3, "the Ask run's call to reach the other server")
    assert any(path.endswith("/chat/completions") for path in theirs.paths)

    visitor = new_page(browser, 1440)
    for path in PAGES:  # every page a visitor can reach, the owner's by their address too
        visitor.goto(f"{url}/{path}")
        visitor.locator('[data-testid="stMain"]').wait_for()
        settle(visitor)
        assert not visitor.locator('[data-testid="stException"]').count(), path
    owner.context.close()
    visitor.context.close()
    assert not carries(theirs, SECRET)
