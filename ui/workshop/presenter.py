"""The presenter's screen of a live room: the room's code, its QR code and address to join, the replay's controls
(each step the presenter shows becomes the room's), the live tally of what participants predict, then the reveal."""

from __future__ import annotations

import streamlit as st

from core.studio.rooms import Room
from core.studio.serving import join_url, qr_png
from core.studio.workshop.replay import Replay
from ui.common import keys, state
from ui.common.text import md
from ui.workshop import predict
from ui.workshop.data import Chosen
from ui.workshop.replay import TICK_SECONDS, controls, player, show, tick
from ui.workshop.room_store import MEMBER, POLL_SECONDS, ROOM, room_replay, rooms


def leave() -> None:
    """This browser stops presenting; the room stays open."""
    st.session_state.get(keys.ROOM_PRESENTING, {}).pop(st.query_params.get(ROOM, ""), None)
    for name in (ROOM, MEMBER):
        st.query_params.pop(name, None)


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
