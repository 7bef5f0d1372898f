"""Participants' pages follow the room without asking: when the presenter moves, the server redraws each page's room
part itself.

A page that asked every second cost the server a script run per participant per second, and each move a redraw of
the whole page (navigation, sidebar, the room's rows looked up again). Here one thread reads the steps of the rooms
being followed (one read per room every ``STEP_READ_SECONDS``, shared by all its pages) and, for each page that drew
another step, asks that page's session to run its room fragment again, as Streamlit itself reruns a session when its
source changes. Only the fragment is redrawn, and nothing runs while the presenter stays on a step.

A session is asked only when idle (no script runner: the last run's messages have all been sent), on the server's
event loop, so the redraw never starts beside a run whose messages are still queued (Streamlit would drop them). A
page not redrawn within ``ASK_AGAIN_SECONDS`` is asked again; a closed session is forgotten. Without Streamlit's
runtime (``AppTest``) nothing is followed: a run draws the step the room is on.

Streamlit has no public call for this: three of its AppSession's private attributes are read (``_event_loop``,
``_scriptrunner``, ``_client_state``) of the version requirements.txt pins; the follow test in
tests/e2e/test_workshop_browser.py fails if another version changes them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime import Runtime
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState, get_script_run_ctx

from core.studio.rooms import RoomError
from ui.workshop.room_store import STEP_READ_SECONDS

ASK_AGAIN_SECONDS = 1.0  # a page asked to redraw that has not drawn the step by then is asked again

_LOG = logging.getLogger(__name__)


@dataclass
class _Page:
    code: str
    fragment_id: str
    step: int  # the step it drew
    asked: float = float("-inf")  # when it was last asked to redraw (monotonic seconds)


class Followers:
    """The pages following a room, by session, and the thread that redraws them when their room moves.
    ``step(code)`` reads a room's step (``RoomError`` when it is gone)."""

    def __init__(self, step: Callable[[str], int]):
        self._step = step
        self._pages: dict[str, _Page] = {}  # session id -> its page
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def drawn(self, code: str, step: int) -> None:
        """Called from inside the room fragment as it draws ``step``: this session follows ``code`` from here."""
        ctx = get_script_run_ctx(suppress_warning=True)
        fragment_id = ThreadState.get().fragment_id if ctx else None
        if ctx is None or fragment_id is None or not Runtime.exists():
            return
        with self._lock:
            self._pages[ctx.session_id] = _Page(code, fragment_id, step)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="room-followers", daemon=True)
                self._thread.start()

    def _watch(self) -> None:
        while True:
            time.sleep(STEP_READ_SECONDS)
            try:
                self._tick()
            except Exception:  # the thread must outlive a bad moment; each one is logged
                _LOG.exception("following rooms")

    def _tick(self) -> None:
        with self._lock:
            pages = dict(self._pages)
        if not pages or not Runtime.exists():  # AppTest's runtime ends with its test
            return
        steps: dict[str, int | None] = {}
        for code in {p.code for p in pages.values()}:
            try:
                steps[code] = self._step(code)
            except RoomError:
                steps[code] = None
        runtime, now = Runtime.instance(), time.monotonic()
        for session_id, page in pages.items():
            session = runtime.get_app_session(session_id)  # None once its tab has gone (a reload runs anew)
            if session is None or steps[page.code] is None:
                self._forget(session_id, page)
            elif steps[page.code] != page.step and now - page.asked >= ASK_AGAIN_SECONDS:
                page.asked = now
                session._event_loop.call_soon_threadsafe(self._redraw, session_id, session, page)

    def _forget(self, session_id: str, page: _Page) -> None:
        with self._lock:
            if self._pages.get(session_id) is page:
                del self._pages[session_id]

    def _redraw(self, session_id: str, session, page: _Page) -> None:
        """On the server's event loop: rerun the page's room fragment if its session is idle, else ask at the next
        read; an idle session whose page has left the room (another page ran whole) is forgotten. The run is the session's
        last one (its address, page and widgets) narrowed to the fragment; it lists no cached messages, since the
        browser may have let go of those the last run named."""
        if session._scriptrunner is not None:
            page.asked = float("-inf")
            return
        if not session.has_fragment(page.fragment_id):
            self._forget(session_id, page)
            return
        state = ClientState()
        state.CopyFrom(session._client_state)
        state.fragment_id, state.is_auto_rerun = page.fragment_id, True
        state.ClearField("cached_message_hashes")
        session.request_rerun(state)
