"""What a room's screens share: the rooms in the studio database, each room's replay (read once per server), finding
a room by its code (wrong codes limited per computer), and which rooms this browser presents."""

from __future__ import annotations

import streamlit as st

from core.engine import paths
from core.studio.rooms import Room, RoomError, RoomStore
from core.studio.throttle import Throttle
from core.studio.workshop.replay import Replay
from ui.common import access, keys
from ui.workshop.data import Chosen, load

ROOM, MEMBER = "room", "member"  # the URL's names for the room code and a participant's token
CODE_TRIES, CODE_WINDOW = 10, 300.0
POLL_SECONDS = 1.0  # how often a room's screens read its row again (the step, the tally)
STEP_READ_SECONDS = 0.2  # a participant's poll takes the step read for any screen this long ago


@st.cache_resource(show_spinner=False)
def _rooms(path: str) -> RoomStore:
    return RoomStore(path)


def rooms() -> RoomStore:
    return _rooms(str(paths.db_path()))


@st.cache_resource(show_spinner=False)
def code_throttle() -> Throttle:
    return Throttle(CODE_TRIES, CODE_WINDOW)


@st.cache_resource(show_spinner=False, max_entries=32)
def _replay(source: str, run_ids: tuple[str, ...]) -> tuple[Chosen, Replay]:
    chosen = load(source, run_ids)
    return chosen, Replay(chosen.runs)


def room_replay(room: Room) -> tuple[Chosen, Replay]:
    """The room's runs, read once per server and shared by everyone in it (runs never change)."""
    return _replay(room.source, room.run_ids)


def find(code: str) -> Room:
    """The room with this code; a wrong code counts against this computer's guesses, and too many in a few minutes
    are refused before the store is asked."""
    key = access.client_key()
    if (wait := code_throttle().wait(key)) > 0:
        raise RoomError(f"too many wrong room codes from this computer; try again in {wait:.0f} s")
    try:
        return rooms().room(code)
    except RoomError:
        code_throttle().failed(key)
        raise


def presenting(code: str) -> str | None:
    return st.session_state.get(keys.ROOM_PRESENTING, {}).get(code)


def present(code: str, token: str) -> None:
    st.session_state.setdefault(keys.ROOM_PRESENTING, {})[code] = token
