"""Two annotators judge the same pool at once in headless chromium: two browser contexts, two names, blind mode
(each sees only their own labels), one by keys 0-3 and one by clicks; then agreement and metrics appear. And a grade
given while the page still shows the passage before (the server's messages late, as on a loaded server) lands on the
passage on screen.

The store is seeded with real saved runs: MedRAG and MASS-RAG over the real teaching-pack index, their replies
scripted (the labels are the point here, not the model). Screenshots (1440 px wide) go to artifacts/screenshots/.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import new_context, press_shortcut, settle
from tests.e2e.conftest import snap as snap_page
from tests.e2e.waits import until

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]
WIDTH = 1440


def _seeded() -> tuple[list, dict[str, str]]:
    """Runs of one teaching case, and each pooled passage's text -> its role in the teaching pack."""
    from core.engine.retrieval import open_retriever
    from core.engine.runner import execute
    from core.studio.teaching import PACK_DIR, load_cases, load_passages
    from tests.fakes import ScriptedLLM

    case = next(c for c in load_cases() if c.id == "stemi")
    retriever = open_retriever([PACK_DIR / "passages.jsonl"])
    medrag = ScriptedLLM().enqueue({"reasoning": "Inferior STEMI: reperfusion now.", "answer": "B", "cited_ids": []})
    mass = (
        ScriptedLLM()
        .on("You are the Summarizer.", {"summary": "Reperfusion is urgent.", "doc_ids": []})
        .on("You are the Extractor.", {"spans": []})
        .on("You are the Reasoner.", {"inference": "Primary PCI fits.", "doc_ids": []})
        .on(
            "You are the Synthesis Agent.",
            {"reasoning": "B.", "answer": "B", "cited_ids": [], "followed_view": "Reasoner"},
        )
    )
    runs = []
    for method, llm, params in (("medrag", medrag, {"k": 5}), ("mass", mass, {"k": 4})):
        run = execute(method, case.to_question(), params, llm=llm, retriever=retriever)
        assert run.status == "ok", run.events[-1]
        runs.append(run)
    return runs, {p.contents: p.role if p.case_id == case.id else "other case" for p in load_passages()}


GRADES = {
    "ann": {"key": 3, "near_miss": 1, "outdated": 2, "other case": 0},
    "bob": {"key": 3, "near_miss": 0, "outdated": 2, "other case": 0},
}
SEEDED = {}


@pytest.fixture(scope="module")
def seed_runs() -> list:
    SEEDED["runs"], SEEDED["roles"] = _seeded()
    return SEEDED["runs"]


def snap(page, name: str) -> None:
    snap_page(page, name, width=WIDTH)


def start(browser, url: str, name: str, stream=None):
    """Annotate, labelling as ``name``; ``stream`` (a Playwright WebSocketRoute handler) sits between the page and
    the server."""
    context = new_context(browser, WIDTH, 900)
    if stream is not None:
        context.route_web_socket("**/_stcore/stream", stream)
    page = context.new_page()
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
    from core.studio.labels import LabelStore

    return {r.snippet_id: (r.grade, r.note) for r in LabelStore(home / "studio.sqlite").labels() if r.annotator == who}


def test_two_annotators_judge_blind_at_once_then_agreement_and_metrics_appear(app, browser):
    url, home = app
    roles = SEEDED["roles"]
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
                press_shortcut(page, str(grade))
            else:
                page.get_by_role("button", name=f"{grade} · ", exact=False).first.click()
            settle(page)
            # the grade is saved and the next passage drawn before the next look at the card
            expect(page.get_by_text(f"{step + 1} of {total} passages of this question judged by you")).to_be_visible()
            if step == 0 and who == "bob":
                # bob sees none of ann's labels, only his own count
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
    ann.context.close()
    bob.context.close()


class Held:
    """The server's messages to the page, held back while ``holding`` (a server slow to deliver); the page's own go
    through at once."""

    def __init__(self):
        self.holding, self.messages, self.page = False, [], None
        self.sent = 0  # the page's messages to the server while holding: a failure says how far a step got

    def __call__(self, page_side) -> None:
        server = page_side.connect_to_server()
        page_side.on_message(lambda m: self._send(server, m))
        server.on_message(lambda m: self.messages.append(m) if self.holding else page_side.send(m))
        self.page = page_side

    def _send(self, server, message) -> None:
        self.sent += self.holding
        server.send(message)

    def finished_runs(self) -> int:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        return sum(
            ForwardMsg.FromString(m).WhichOneof("type") == "script_finished"
            for m in self.messages
            if isinstance(m, bytes)
        )

    def release(self) -> None:
        self.holding = False
        for message in self.messages:
            self.page.send(message)
        self.messages.clear()


def test_a_grade_given_before_the_page_has_caught_up_lands_on_the_passage_on_screen(app, browser):
    from core.studio.labels import collect

    url, home = app
    held = Held()
    page = start(browser, url, "cy", stream=held)

    def grades() -> set[int]:
        return {grade for grade, _ in labels_of(home, "cy").values()}

    number, _, shown = passage(page)
    page.locator(".snip.judge").click()
    held.holding = True
    press_shortcut(page, "2")
    # the server has saved the 2 and drawn the next passage; the page has not heard yet
    until(lambda: held.sent, "the page's rerun after the key 2, sent to the server", page=page)
    until(lambda: 2 in grades(), "the grade 2 saved", page=page)
    until(held.finished_runs, "the server's run after the key 2, held from the page", page=page)
    assert passage(page)[2] == shown
    press_shortcut(page, "3")  # the annotator changes their mind on the passage they see
    until(lambda: 3 in grades(), "the grade 3 saved", page=page)
    held.release()
    settle(page)
    texts = {
        item.pool_id: " ".join(item.blind_text().split()) for q in collect(home / "studio.sqlite") for item in q.items
    }
    assert {texts[snippet]: grade for snippet, (grade, _) in labels_of(home, "cy").items()} == {
        " ".join(shown.split()): 3
    }
    expect(page.get_by_text(f"Saved: passage {number} graded 3 · key")).to_be_visible()
    page.context.close()
