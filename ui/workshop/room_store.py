"""What a room's screens share: the rooms in the studio database, each room's replay (read once per server), finding
a room by its code (wrong codes limited per computer), and which rooms this browser presents."""

from __future__ import annotations

import streamlit as st

from core.engine import paths
from core.studio.rooms import Member, Room, RoomError, RoomStore
from core.studio.throttle import Throttle
from core.studio.workshop.replay import Replay
from ui.common import access, keys
from ui.workshop.data import Chosen, load

ROOM, MEMBER = "room", "member"  # the URL's names for the room code and a participant's token
CODE_TRIES, CODE_WINDOW = 10, 300.0
JOINS, JOIN_WINDOW = 5, 600.0  # joins of one room from one computer (a reload rejoins by its token, not counted)
POLL_SECONDS = 1.0  # how often the presenter's screen reads the room's row again (the tally)
STEP_READ_SECONDS = 0.2  # how often participants' pages are checked against their room's step (follow.py)


@st.cache_resource(show_spinner=False)
def _rooms(path: str) -> RoomStore:
    return RoomStore(path)


def rooms() -> RoomStore:
    return _rooms(str(paths.db_path()))


@st.cache_resource(show_spinner=False)
def code_throttle() -> Throttle:
    return Throttle(CODE_TRIES, CODE_WINDOW)


@st.cache_resource(show_spinner=False)
def join_throttle() -> Throttle:
    return Throttle(JOINS, JOIN_WINDOW)


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
    if (wait := code_throttle().take(key)) > 0:
        raise RoomError(f"too many wrong room codes from this computer; try again in {wait:.0f} s")
    room = rooms().room(code)  # a wrong code stays counted
    code_throttle().give_back(key)
    return room


def join(code: str, name: str) -> tuple[Member, str]:
    """A new member of the room with this code; one computer joins one room a few times in some minutes at most,
    so a script cannot fill a room with made-up participants."""
    room = find(code)
    if (wait := join_throttle().take(f"{access.client_key()} {room.code}")) > 0:
        raise RoomError(
            f"this computer has joined room {room.code} {JOINS} times in the last {JOIN_WINDOW / 60:.0f} minutes; "
            f"try again in {wait:.0f} s"
        )
    return rooms().join(room.code, name)


def presenting(code: str) -> str | None:
    return st.session_state.get(keys.ROOM_PRESENTING, {}).get(code)


def present(code: str, token: str) -> None:
    st.session_state.setdefault(keys.ROOM_PRESENTING, {})[code] = token
