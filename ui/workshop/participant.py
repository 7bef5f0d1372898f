"""A participant's screen of a live room: the room part is a fragment the server redraws when the presenter moves
(``ui/workshop/follow.py``; the page never asks); the participant predicts and votes on snippets, and sees the reveal
on top with a personal tally when the presenter shows it."""

from __future__ import annotations

import streamlit as st

from core.studio.rooms import Member, Room, RoomError
from core.studio.turns import Turns
from ui.common import keys
from ui.common.text import md
from ui.workshop import predict
from ui.workshop.follow import Followers
from ui.workshop.replay import progress_line, question, show
from ui.workshop.room_store import STEP_READ_SECONDS, room_replay, rooms


@st.cache_resource(show_spinner=False)
def redraws() -> Turns:
    return Turns()


@st.cache_resource(show_spinner=False)
def followers() -> Followers:
    return Followers(lambda code: rooms().step(code, within=STEP_READ_SECONDS))


def participant_view(room: Room, member: Member) -> None:
    st.markdown(f"**{md(room.title)}** · you are **{md(member.name)}** in room **{room.code}**")
    st.caption(f"Following the presenter · room {room.code} · the page moves when the presenter does")
    question(room_replay(room)[1])  # the same at every step: drawn once, above the part redrawn at each move
    st.fragment(_room)(room.code, member)


def _room(code: str, member: Member) -> None:
    """The room as it is now: drawn with the page, and alone when the server redraws it after a move."""
    with redraws().turn():
        try:
            room = rooms().room(code)
        except RoomError as exc:
            st.error(f"{exc}.")
            return
        followers().drawn(room.code, room.step)
        _room_view(room, member)


def _room_view(room: Room, member: Member) -> None:
    chosen, replay = room_replay(room)
    progress_line(replay, room.step)
    picks, trust = rooms().my_votes(room.code, member.id)
    trusted = {i for i, yes in trust.items() if yes}
    seen = keys.room_revealed(room.code)  # once revealed, this participant's predictions stay closed
    if room.revealed:  # at the top, brought into view when it comes
        predict.reveal(replay, chosen.case, picks=picks, tally=rooms().tally(room.code), once_key=seen)
    else:
        with st.container(border=True):
            predict.predictions(
                replay,
                room.step,
                key=keys.room_controls(room.code),
                picks=picks,
                trusted=trusted,
                on_pick=lambda run_id, option: _vote(room, member, run_id, option),
                on_trust=lambda chosen_ids: _trust(room, member, trusted, chosen_ids),
                locked=bool(st.session_state.get(seen)),
            )
    # the step's new events only, unless the participant asks for the earlier ones: each step redraws every
    # participant's room at once, and the earlier steps are most of a page (the projected screen shows them all)
    earlier = st.toggle(
        "Show the earlier steps too",
        key=keys.room_earlier(room.code),
        help="They stay on the presenter's screen; here the page shows the step the room is on",
    )
    show(replay, room.step, key=f"room-{room.code}", earlier=earlier, with_question=False)


def _vote(room: Room, member: Member, run_id: str, option: str | None) -> None:
    if option is None:
        return
    try:
        rooms().predict(room.code, member.id, run_id, option)
    except RoomError as exc:
        st.toast(str(exc))


def _trust(room: Room, member: Member, before: set[str], chosen_ids: set[str]) -> None:
    try:
        for snippet_id in chosen_ids - before:
            rooms().trust(room.code, member.id, snippet_id, True)
        for snippet_id in before - chosen_ids:
            rooms().trust(room.code, member.id, snippet_id, None)
    except RoomError as exc:
        st.toast(str(exc))
