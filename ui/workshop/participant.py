"""A participant's screen of a live room: it follows the presenter (a small fragment polls the room's row once a
second and redraws the page when the step moved); the participant predicts and votes on snippets, and sees the reveal
on top with a personal tally when the presenter shows it."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.studio.rooms import Member, Room, RoomError
from core.studio.turns import Turns
from ui.common import keys
from ui.common.text import md
from ui.workshop import predict
from ui.workshop.replay import progress_line, show
from ui.workshop.room_store import POLL_SECONDS, STEP_READ_SECONDS, room_replay, rooms


def _follow(code: str) -> None:
    """Runs every second: when the presenter has moved from the step this page last drew, redraw the whole page.
    It draws nothing (a screen's every poll would send it again) and reads the step the room's screens share."""
    if st.session_state.get(keys.ROOM_SHOWN) != (code, rooms().step(code, within=STEP_READ_SECONDS)):
        st.rerun()


def _poll(code: str) -> Callable[[], None]:
    """The polling fragment under a name of its own for this whole-page run, so a poll the browser sent before it
    heard of this run is refused. Streamlit (1.67) otherwise runs such a poll in a new script runner when it arrives
    after this run ended but before the server sent this run's messages, and drops those messages: the page keeps the
    step before and, its timer gone with them, stops following the room (under load, a few in every sixty)."""
    run = st.session_state[keys.ROOM_PAGE_RUNS] = st.session_state.get(keys.ROOM_PAGE_RUNS, 0) + 1

    def follow() -> None:
        _follow(code)

    follow.__qualname__ = f"follow.{run}"  # the fragment's id is made from its name and place
    return follow


@st.cache_resource(show_spinner=False)
def redraws() -> Turns:
    return Turns()


def participant_view(room: Room, member: Member) -> None:
    with redraws().turn():
        _participant_view(room, member)


def _participant_view(room: Room, member: Member) -> None:
    chosen, replay = room_replay(room)
    st.session_state[keys.ROOM_SHOWN] = (room.code, room.step)
    st.markdown(f"**{md(room.title)}** · you are **{md(member.name)}** in room **{room.code}**")
    st.caption(f"Following the presenter · room {room.code} · updated every second")
    st.fragment(_poll(room.code), run_every=POLL_SECONDS)()
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
    # participant's page at once, and the earlier steps are most of a page (the projected screen shows them all)
    earlier = st.toggle(
        "Show the earlier steps too",
        key=keys.room_earlier(room.code),
        help="They stay on the presenter's screen; here the page shows the step the room is on",
    )
    show(replay, room.step, key=f"room-{room.code}", earlier=earlier)


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
