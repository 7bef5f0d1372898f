"""The live classroom room: the presenter steps through a replay and every participant's screen follows (a small
fragment polls the room's row once a second and redraws the page when the step moved); participants predict and
vote on snippets from their own browsers, the presenter sees the tally, then reveals.

A room lives in the studio database, so every session of this server shares it. The page address names the room
(``?room=CODE``: the code is no secret) and a participant's token (``&member=TOKEN``), so a reload, or the same link
opened later, rejoins as the same person. The presenter's token stays in the presenter's browser session, never in
the address bar a projector shows; the studio's owner can take a room over from another browser. A participant's
screen shows the room and nothing else, and wrong room codes are limited per computer.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core import paths
from core.access import Access, Action
from core.rooms import Member, Room, RoomError, RoomStore
from core.serving import join_url, qr_png
from core.throttle import Throttle
from core.turns import Turns
from core.workshop.replay import Replay
from ui.common import access
from ui.workshop import predict
from ui.common import state
from ui.workshop.replay import TICK_SECONDS, controls, player, progress_line, show, tick
from ui.common.text import md
from ui.workshop.data import Chosen, load
from ui.common import keys

POLL_SECONDS = 1.0
ROOM, MEMBER = "room", "member"
OLD_PRESENTER = "presenter"  # links made before the token left the address: moved into the session, then dropped
CODE_TRIES, CODE_WINDOW = 10, 300.0


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


def in_a_room() -> bool:
    return ROOM in st.query_params


def only_the_room(now: Access) -> bool:
    """A visitor with a room in the address sees the room and nothing else (no navigation, no sidebar)."""
    return not now.owner and in_a_room()


def only_the_room_style() -> None:
    """Without a sidebar the logo sits in the page's top bar: leave it room above the page."""
    st.html('<style>[data-testid="stMainBlockContainer"] { padding-top: 4.5rem; }</style>')


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


def _presenting(code: str) -> str | None:
    return st.session_state.get(keys.ROOM_PRESENTING, {}).get(code)


def _present(code: str, token: str) -> None:
    st.session_state.setdefault(keys.ROOM_PRESENTING, {})[code] = token


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
    _present(room.code, token)
    st.query_params.update({ROOM: room.code})
    st.rerun()


def _take_over(code: str) -> None:
    if access.allowed(Action.PRESENT):
        _present(code, rooms().take_over(code))


def leave() -> None:
    st.session_state.get(keys.ROOM_PRESENTING, {}).pop(st.query_params.get(ROOM, ""), None)
    for name in (ROOM, MEMBER):
        st.query_params.pop(name, None)


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
            _present(room.code, old)
        st.query_params.pop(OLD_PRESENTER, None)
    try:
        room_replay(room)
    except KeyError as exc:
        st.error(f"This room cannot be shown on this server: {exc.args[0]}.")
        return
    token = _presenting(room.code)
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
        find(code)
        member, token = rooms().join(code, name)
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


# -- the presenter -------------------------------------------------------------------------------------------


def join_address(code: str) -> str:
    """Where participants join: the address ``make serve`` found on the network, else the one this browser used."""
    used = (
        st.context.url
        if isinstance(st.context.url, str) and st.context.url.startswith("http")
        else f"http://localhost:{st.get_option('server.port')}"
    )
    return join_url(state.settings().join_url or used, code)


def _banner(room: Room) -> None:
    st.markdown(f'<div class="room-code">Room <b>{room.code}</b></div>', unsafe_allow_html=True)
    link = join_address(room.code)
    st.image(qr_png(link), caption="Scan to join", width=180)
    st.markdown(f"or open **{md(link)}**")
    st.caption(f"Or open this studio's Workshop page, choose Join a room and type **{room.code}**. No login needed.")


def presenter_view(room: Room, token: str) -> None:
    chosen, replay = room_replay(room)
    p = player(keys.room_player(room.code), replay)
    if st.session_state.get(keys.ROOM_SHOWN) != (room.code, "presenter"):  # a reload: take up where the room is
        p.step, st.session_state[keys.ROOM_SHOWN] = room.step, (room.code, "presenter")
    top, side = st.columns([3, 1], gap="large")
    with side:
        _banner(room)
        st.button(
            "Leave the room",
            key="room.leave",
            on_click=leave,
            icon=":material/logout:",
            help="This browser stops presenting; the room stays open and the owner can present it again",
        )
        st.fragment(_live_tally, run_every=POLL_SECONDS)(room.code, replay)
    with top:
        st.fragment(_presenter_stage, run_every=TICK_SECONDS if p.playing else None)(room, token, replay, chosen)


def _presenter_stage(room: Room, token: str, replay: Replay, chosen: Chosen) -> None:
    p = player(keys.room_player(room.code), replay)
    tick(replay, p)
    controls(replay, p, key=keys.room_controls(room.code))
    if rooms().room(room.code).step != p.step:
        rooms().set_step(room.code, token, p.step)
    if replay.steps[p.step].reveal:
        predict.reveal(replay, chosen.case, tally=rooms().tally(room.code))
    show(replay, p.step, key=f"room-{room.code}")


def _live_tally(code: str, replay: Replay) -> None:
    st.markdown("**Live tally**")
    predict.tally_chart(replay, rooms().tally(code))
    names = [m.name for m in rooms().members(code)]
    st.caption(f"In the room: {', '.join(names)}" if names else "Nobody has joined yet.")


# -- a participant -------------------------------------------------------------------------------------------


def _follow(code: str) -> None:
    """Runs every second: when the presenter has moved from the step this page last drew, redraw the whole page."""
    room = rooms().room(code)
    if st.session_state.get(keys.ROOM_SHOWN) != (code, room.step):
        st.rerun()
    st.caption(f"Following the presenter · room {code} · updated every second")


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
    st.fragment(_poll(room.code), run_every=POLL_SECONDS)()
    progress_line(replay, room.step)
    picks, trusted = rooms().my_votes(room.code, member.id)
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
                trusted={i for i, yes in trusted.items() if yes},
                on_pick=lambda run_id, option: _vote(room, member, run_id, option),
                on_trust=lambda chosen_ids: _trust(room, member, trusted, chosen_ids),
                locked=bool(st.session_state.get(seen)),
            )
    show(replay, room.step, key=f"room-{room.code}")


def _vote(room: Room, member: Member, run_id: str, option: str | None) -> None:
    if option is None:
        return
    try:
        rooms().predict(room.code, member.id, run_id, option)
    except RoomError as exc:
        st.toast(str(exc))


def _trust(room: Room, member: Member, before: dict[str, bool], chosen_ids: set[str]) -> None:
    try:
        for snippet_id in chosen_ids - {i for i, yes in before.items() if yes}:
            rooms().trust(room.code, member.id, snippet_id, True)
        for snippet_id in {i for i, yes in before.items() if yes} - chosen_ids:
            rooms().trust(room.code, member.id, snippet_id, None)
    except RoomError as exc:
        st.toast(str(exc))
