"""The live classroom room: opening one, joining one, and which screen the page address gets — the presenter's
(``presenter``), a participant's (``participant``) or the join form.

A room lives in the studio database, so every session of this server shares it. The page address names the room
(``?room=CODE``: the code is no secret) and a participant's token (``&member=TOKEN``), so a reload, or the same link
opened later, rejoins as the same person. The presenter's token stays in the presenter's browser session, never in
the address bar a projector shows; the studio's owner can take a room over from another browser. A participant's
screen shows the room and nothing else, and wrong room codes are limited per computer.
"""

from __future__ import annotations

import streamlit as st

from core.studio.access import Access, Action
from core.studio.rooms import RoomError
from core.studio.workshop.replay import Replay
from ui.common import access, keys
from ui.workshop.data import Chosen
from ui.workshop.participant import participant_view
from ui.workshop.presenter import presenter_view
from ui.workshop.room_store import MEMBER, ROOM, find, join, present, presenting, room_replay, rooms

OLD_PRESENTER = "presenter"  # links made before the token left the address: moved into the session, then dropped


def in_a_room() -> bool:
    return ROOM in st.query_params


def only_the_room(now: Access) -> bool:
    """A visitor with a room in the address sees the room and nothing else (no navigation, no sidebar)."""
    return not now.owner and in_a_room()


def only_the_room_style() -> None:
    """Without a sidebar the logo sits in the page's top bar: leave it room above the page."""
    st.html('<style>[data-testid="stMainBlockContainer"] { padding-top: 4.5rem; }</style>')


def open_room(chosen: Chosen, replay: Replay, title: str) -> None:
    if not access.allowed(Action.PRESENT):
        return
    room, token = rooms().open_room(
        title=title,
        source=chosen.source,
        run_ids=chosen.ids,
        steps=len(replay),
        case_id=chosen.case.id if chosen.case else None,
    )
    present(room.code, token)
    st.query_params.update({ROOM: room.code})
    st.rerun()


def _take_over(code: str) -> None:
    if access.allowed(Action.PRESENT):
        present(code, rooms().take_over(code))


def view() -> None:
    """The room named in the page address: the presenter's screen, a participant's, or the join form."""
    code = st.query_params.get(ROOM, "")
    try:
        room = find(code)
    except RoomError as exc:
        st.error(f"{exc}.")
        join_form()
        return
    if old := st.query_params.get(OLD_PRESENTER):  # an older link: the token moves out of the address bar
        if rooms().is_presenter(room.code, old):
            present(room.code, old)
        st.query_params.pop(OLD_PRESENTER, None)
    try:
        room_replay(room)
    except KeyError as exc:
        st.error(f"This room cannot be shown on this server: {exc.args[0]}.")
        return
    token = presenting(room.code)
    if token and rooms().is_presenter(room.code, token):
        presenter_view(room, token)
        return
    member_token = st.query_params.get(MEMBER)
    member = rooms().member(room.code, member_token) if member_token else None
    if member is None:
        if access.current().may(Action.PRESENT):
            st.button(
                f"Present room {room.code} from this browser",
                icon=":material/co_present:",
                key="room.take_over",
                on_click=_take_over,
                args=(room.code,),
                help="The presenter's screen moves here; the browser that presented it stops presenting",
            )
        join_form(room.code)
        return
    participant_view(room, member)


def _join(default_code: str) -> None:
    code = st.session_state.get(keys.ROOM_JOIN_CODE, default_code)
    name = st.session_state.get(keys.ROOM_JOIN_NAME, "")
    try:
        member, token = join(code, name)
    except RoomError as exc:
        st.session_state[keys.ROOM_JOIN_ERROR] = str(exc)
        return
    st.session_state.pop(keys.ROOM_JOIN_ERROR, None)
    st.query_params.update({ROOM: member.room_code, MEMBER: token})


def join_form(code: str = "") -> None:
    with st.form("room.join", border=True):
        st.markdown("**Join a room**: type the code the presenter shows, and your name.")
        st.text_input("Room code", value=code, key=keys.ROOM_JOIN_CODE, max_chars=9, placeholder="e.g. K7PX3M")
        st.text_input("Your name", key=keys.ROOM_JOIN_NAME, max_chars=40)
        st.form_submit_button("Join", type="primary", on_click=_join, args=(code,))
    if error := st.session_state.get(keys.ROOM_JOIN_ERROR):
        st.error(error)
