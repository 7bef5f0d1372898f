"""The Workshop page in headless chromium at 1440 px, on the recorded workshop pack shipped with the project:
a replay mid-run and its reveal, a live room with a presenter and two participants in their own browser contexts
(the tally, then everyone following the presenter's steps), and what-if re-runs: one side by side, one found again
after a reload, listed in History's running list and stopped.

No embedded model: replay needs none, and the what-if re-run talks to a small scripted OpenAI-compatible
endpoint on 127.0.0.1 (real HTTP, real retrieval over the default corpus), so the page's whole path runs in
seconds; for the re-run that is reloaded and stopped, the endpoint holds the reply at a gate until the test lets it
go. Screenshots go to artifacts/screenshots/workshop_*.png.
"""

from __future__ import annotations

import json
import time
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from core.engine.store import RunStore
from core.studio.workshop.pack import PACK_DIR, case_path
from tests.e2e.conftest import CHROMIUM, button, choose, pick, settle
from tests.e2e.conftest import new_page as browser_page
from tests.e2e.conftest import snap as snap_page
from tests.e2e.serve import serve_app
from tests.e2e.waits import ms, until
from tests.fake_endpoint import FakeEndpoint, Step
from tests.waiting import Gate

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]
WIDTH = 1440
REPLY = {"reasoning": "Without that passage the documents point elsewhere.", "answer": "A", "cited_ids": []}


class Endpoint(FakeEndpoint):
    """The scripted model: ``REPLY`` to every call, as soon as ``gate`` lets it (open unless a test shuts it)."""

    def __init__(self):
        self.gate = Gate(is_open=True)
        super().__init__(script=lambda request: Step(text=json.dumps(REPLY), usage=(900, 30), gate=self.gate))


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's chromium at {CHROMIUM}")
    if not case_path("stemi", PACK_DIR).exists():
        pytest.skip("the workshop pack has no stemi case: record it with `python -m core workshop record`")
    endpoint = Endpoint()
    home = tmp_path_factory.mktemp("workshop-home")
    with serve_app(
        home,
        {
            "MEDRAG_BASE_URL": endpoint.url,
            "MEDRAG_MODEL": "scripted",
            "MEDRAG_CACHE": "off",
            "MEDRAG_WORKSHOP_PACK": str(PACK_DIR),
        },
    ) as (url, _):
        yield url, home, endpoint
    endpoint.gate.open()
    endpoint.close()


def new_page(browser):
    return browser_page(browser, WIDTH)


def snap(page, name: str) -> None:
    settle(page)
    snap_page(page, f"workshop_{name}", width=WIDTH)


def open_workshop(browser, url: str, *methods: str):
    """A new browser context on the Workshop page with the pack's first case and these methods chosen."""
    page = new_page(browser)
    page.goto(f"{url}/workshop")
    page.get_by_role("heading", name="Workshop", level=1).wait_for()
    settle(page)
    choose_methods(page, *methods)
    return page


def choose_methods(page, *labels: str) -> None:
    box = page.locator('[data-testid="stMultiSelect"]', has_text="Methods (one, or two or three")
    for label in labels:
        choose(page, box, label)


def click(page, name: str) -> None:
    page.get_by_role("button", name=name, exact=True).click()
    settle(page)


def test_replay_mid_run_then_the_reveal(app, browser):
    url = app[0]
    page = open_workshop(browser, url, "MedRAG")
    expect(page.get_by_text("Step 0 of")).to_be_visible()
    page.get_by_text("B. Aspirin loading dose", exact=False).first.click()  # the prediction for CoT
    settle(page)
    click(page, "Next")
    expect(page.get_by_text("Step 1 of 2 · Retrieve / generate")).to_be_visible()
    expect(page.get_by_text("No step of this stage: waiting for the others.")).to_be_visible()
    assert page.locator(".answer-line").count() == 0  # no answer before the reveal
    snap(page, "replay_mid_run")
    click(page, "Reveal the answer")
    expect(page.get_by_text("The reveal", exact=True)).to_be_visible()
    expect(page.get_by_text("Teaching pack key: B.", exact=False)).to_be_visible()
    expect(page.get_by_text("you predicted B", exact=False).first).to_be_visible()
    expect(page.get_by_text("Your predictions: right for", exact=False)).to_be_visible()
    assert page.locator(".answer-line").count() == 2
    snap(page, "reveal")


def test_a_live_room_two_participants_vote_and_follow_the_presenter(app, browser, timings):
    url = app[0]
    presenter = open_workshop(browser, url, "MedRAG")
    click(presenter, "Open a live room with these runs")
    presenter.get_by_text("Live tally").wait_for()
    code = parse_qs(urlparse(presenter.url).query)["room"][0]
    guests = []
    for name, choice in (("Ada", "B. Aspirin loading dose"), ("Grace", "A. High-flow oxygen")):
        guest = new_page(browser)
        guest.goto(f"{url}/workshop?room={code}")
        guest.get_by_label("Your name").fill(name)
        click(guest, "Join")
        guest.get_by_text(f"you are {name} in room {code}").wait_for()
        settle(guest)
        guest.get_by_test_id("stRadio").first.get_by_text(choice, exact=False).click()  # CoT's pick
        settle(guest)
        expect(guest.get_by_role("radio", name=choice).first).to_be_checked()
        guests.append(guest)
    presenter.get_by_text("2 of 2 participants").wait_for()
    expect(presenter.get_by_text("In the room: Ada, Grace")).to_be_visible()
    snap(presenter, "room_tally")
    moved = time.perf_counter()
    click(presenter, "Next")
    for guest in guests:
        guest.get_by_text("Step 1 of 2").wait_for()
    timings["participants_followed_s"] = round(time.perf_counter() - moved, 1)
    expect(
        guests[0].get_by_text("Show the earlier steps too")
    ).to_be_visible()  # the new step first, the rest on request
    snap(guests[0], "participant_step")
    snap_page(guests[0], "workshop_participant_step_1024", width=1024)
    click(presenter, "Reveal the answer")
    guests[0].get_by_text("The reveal", exact=True).wait_for()
    expect(guests[0].get_by_text("the room predicted A 1, B 1", exact=False).first).to_be_visible()
    guests[0].reload()  # a reload rejoins with the token in the address
    guests[0].get_by_text(f"you are Ada in room {code}").wait_for()
    expect(guests[0].get_by_text("you predicted B", exact=False).first).to_be_visible()
    snap(guests[0], "participant_reveal")
    for shown in (presenter, *guests):
        shown.context.close()


def what_if(page) -> None:
    """At the replay's first retrieval: drop its first snippet and re-run MedRAG live."""
    click(page, "Next")
    settle(page)  # an expander opened while the step is still being drawn is drawn again closed
    page.get_by_text("What if… drop or pin a snippet", exact=False).click()
    pick(page, "Snippet to drop from every retrieval")
    page.get_by_role("button", name="Re-run MedRAG live with this change").click()


def test_what_if_survives_a_reload_is_listed_in_history_and_stops(app, browser, timings):
    url, home, endpoint = app
    endpoint.gate.shut()  # the reader's reply waits: time to reload, look at History and stop it
    page = open_workshop(browser, url, "MedRAG")
    what_if(page)
    page.get_by_text("What-if re-run of MedRAG (dropped", exact=False).wait_for(timeout=ms("index"))
    until(lambda: endpoint.gate.held == 1, "the re-run's call held at the endpoint", "index")
    run_id = parse_qs(urlparse(page.url).query)["whatif"][0]
    snap(page, "whatif_running")
    page.reload()  # a new browser session: only the address names the re-run
    page.get_by_text("What-if re-run of MedRAG (dropped", exact=False).wait_for()
    expect(page.get_by_text(f"Saved as it goes as run {run_id}", exact=False)).to_be_visible()
    expect(button(page, "Stop")).to_be_visible()
    snap_page(page, "workshop_whatif_reloaded_running_1024", width=1024)
    history = new_page(browser)
    history.goto(f"{url}/history")
    history.get_by_text("Running now", exact=False).wait_for()
    expect(history.get_by_text("what-if run", exact=True)).to_be_visible()
    expect(history.locator(f'a[href*="workshop?whatif={run_id}"]')).to_contain_text("Follow live")
    settle(history)
    snap_page(history, "workshop_history_running_now", width=WIDTH)
    snap_page(history, "workshop_history_running_now_1024", width=1024)
    asked = time.perf_counter()
    button(page, "Stop").click()
    page.get_by_text("The re-run was stopped before it finished", exact=False).wait_for()
    timings["whatif_stop_seconds"] = round(time.perf_counter() - asked, 1)
    expect(page.get_by_text("The what-if re-run")).to_be_visible()
    snap(page, "whatif_stopped")
    assert RunStore(home / "studio.sqlite").load_run(run_id).status == "cancelled"
    history.reload()
    history.get_by_role("heading", name="History", level=1).wait_for()
    settle(history)
    expect(history.get_by_text("what-if run", exact=True)).to_have_count(0)  # no longer running
    endpoint.gate.open()  # the stopped call, whose client has gone
    page.context.close()
    history.context.close()


def test_what_if_drop_a_snippet_side_by_side(app, browser):
    page = open_workshop(browser, app[0], "MedRAG")
    what_if(page)
    page.get_by_text("What changed", exact=False).wait_for(timeout=ms("index"))
    expect(page.get_by_text("The what-if re-run")).to_be_visible()
    expect(page.get_by_text("Answer changed", exact=False)).to_be_visible()
    snap(page, "whatif_side_by_side")
    page.reload()  # the finished re-run stays on screen, found again by the address
    page.get_by_text("What changed", exact=False).wait_for()
    expect(page.get_by_text("Answer changed", exact=False)).to_be_visible()
    snap_page(page, "workshop_whatif_side_by_side_1024", width=1024)
    page.context.close()


class Tab:
    """A participant's browser tab as Streamlit's websocket protocol: it asks for whole-page runs and reads what the
    server sends, whether it asked or not."""

    def __init__(self, url: str, query: str):
        from websockets.sync.client import connect

        self.ws = connect(
            url.replace("http://", "ws://") + "/_stcore/stream", subprotocols=["streamlit"], max_size=2**26
        )
        self.query, self.page_hash = query, ""

    def send(self) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        msg.rerun_script.query_string, msg.rerun_script.page_name = self.query, "workshop"
        msg.rerun_script.page_script_hash = self.page_hash
        self.ws.send(msg.SerializeToString())

    def runs(self, wait: str = "redraw"):
        """The runs the server sends within the ``wait`` of the table, one at a time as they finish: (whether it ran
        the page whole, the "Step N of M" lines it drew). A run cut short to run again counts with the next."""
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        steps: list[str] = []
        deadline = time.monotonic() + ms(wait) / 1000
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg = ForwardMsg.FromString(self.ws.recv(timeout=left))
            except TimeoutError:
                return
            kind = msg.WhichOneof("type")
            if kind == "navigation":
                self.page_hash = msg.navigation.page_script_hash
            elif kind == "auto_rerun":
                raise AssertionError(f"the page set a timer to rerun fragment {msg.auto_rerun.fragment_id}")
            elif kind == "delta" and msg.delta.new_element.WhichOneof("type") == "progress":
                steps.append(msg.delta.new_element.progress.text.split(" · ")[0])
            elif kind == "script_finished" and msg.script_finished in (
                ForwardMsg.FINISHED_SUCCESSFULLY,
                ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
            ):
                yield msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY, steps
                steps = []

    def until_drawn(self, step: int) -> list[bool]:
        """Reads runs until one draws ``step``: whether each ran the page whole."""
        whole: list[bool] = []
        for page, steps in self.runs():
            whole.append(page)
            if any(s.startswith(f"Step {step} of") for s in steps):
                return whole
        raise AssertionError(f"no run drew step {step} within the 'redraw' wait; runs (whole page?): {whole}")


def test_a_participants_page_follows_the_room_without_asking(app):
    """A participant's page sets no timer and the server runs nothing for it while the presenter stays on a step;
    when the presenter moves, the server redraws the page's room part alone (a fragment run), also for a move made
    while the page is running whole (it waits for that run's messages, then redraws; ui/workshop/follow.py)."""
    from core.studio.rooms import RoomStore
    from core.studio.workshop.pack import load_pack
    from core.studio.workshop.replay import Replay

    url, home, _ = app
    run = next(c for c in load_pack(PACK_DIR)[0] if c.case.id == "stemi").runs["medrag"].run
    rooms = RoomStore(home / "studio.sqlite")
    room, presenter = rooms.open_room(
        title="follow", source="pack", run_ids=[run.id], steps=len(Replay([run])), case_id="stemi"
    )
    tabs = [Tab(url, f"room={room.code}&member={rooms.join(room.code, name)[1]}") for name in ("Ada", "Grace")]
    for tab in tabs:
        tab.send()
        assert tab.until_drawn(0) == [True]
        assert not list(tab.runs("glance"))  # the room stays: nothing runs
    rooms.set_step(room.code, presenter, 1)
    for tab in tabs:
        assert tab.until_drawn(1) == [False]  # the room part alone
    tabs[0].send()  # the page runs whole (a tap, a reload) as the presenter moves
    rooms.set_step(room.code, presenter, 2)
    assert True in tabs[0].until_drawn(2)  # its own run, then (if that run drew step 1) the redraw
    assert not list(tabs[0].runs("glance"))  # and then nothing more
    assert tabs[1].until_drawn(2) == [False]
    for tab in tabs:
        tab.ws.close()
