"""Workshop: replay recorded runs step by step with no model, predict before the reveal, run a live room that
participants follow from their own browsers, and re-run a method with a snippet dropped or pinned."""

from __future__ import annotations

from datetime import datetime

import streamlit as st

from core.studio.access import Action
from core.studio.teaching import load_passages
from core.studio.workshop.replay import Replay
from ui.common import access, keys, state
from ui.common.chrome import header
from ui.common.knobs import method_label
from ui.common.text import short
from ui.workshop import predict
from ui.workshop import room as room_view
from ui.workshop import whatif as whatif_view
from ui.workshop.data import PACK, STORE, Chosen, load, pack
from ui.workshop.replay import TICK_SECONDS, controls, player, show, tick

MAX_RUNS = 3


def _passage_titles() -> dict[str, str]:
    return {p.id: p.title for p in load_passages()}


def cases_table() -> None:
    """The pack's cases with what each teaches: the look-alikes to tell apart and the outdated advice to spot."""
    cases = pack()[0]
    titles = _passage_titles()
    st.dataframe(
        [
            {
                "case": c.case.title,
                "specialty": c.case.specialty,
                "what it teaches": "; ".join(
                    filter(
                        None,
                        [
                            "tell apart: " + ", ".join(titles[i] for i in c.case.near_miss_passages)
                            if c.case.near_miss_passages
                            else "",
                            "spot the outdated advice: " + ", ".join(titles[i] for i in c.case.outdated_passages)
                            if c.case.outdated_passages
                            else "",
                        ],
                    )
                ),
                "recorded methods": ", ".join(method_label(m) for m in c.runs),
            }
            for c in cases
        ],
        hide_index=True,
    )


def choose_from_pack() -> Chosen | None:
    cases, problems, _ = pack()
    for problem in problems:
        st.warning(f"A pack file could not be read: {problem}")
    if not cases:
        st.info(
            "The workshop pack holds no recorded case yet. Record it with `python -m core workshop record`, "
            "or replay saved runs instead."
        )
        return None
    by_id = {c.case.id: c for c in cases}
    linked_method = None
    if (linked_case := st.query_params.pop("case", None)) in by_id:  # a link from Ask or Compare (ui/runs/pace.py)
        state.preset("workshop.case", linked_case)
        linked_method = st.query_params.pop("method", None)
    case_id = state.kept(
        st.selectbox,
        "Case",
        key="workshop.case",
        default=cases[0].case.id,
        options=list(by_id),
        format_func=lambda i: f"{by_id[i].case.specialty.capitalize()} · {by_id[i].case.title}",
    )
    recorded = by_id[case_id].runs
    methods = st.multiselect(
        "Methods (one, or two or three to step together)",
        list(recorded),
        default=[linked_method] if linked_method in recorded else list(recorded)[:1],
        max_selections=MAX_RUNS,
        key=f"workshop.methods.{case_id}",
        format_func=method_label,
    )
    if not methods:
        return None
    return Chosen(PACK, [recorded[m].run for m in methods], by_id[case_id].case)


def choose_saved() -> Chosen | None:
    rows = state.store().list_runs(limit=1000)
    if not rows:
        st.info("No saved runs yet: ask a question on the Ask page, or import a run file in History.")
        return None
    by_id = {r["id"]: r for r in rows}
    ids = st.multiselect(
        "Saved or imported runs of one question (up to three)",
        list(by_id),
        key="workshop.saved",
        max_selections=MAX_RUNS,
        format_func=lambda i: (
            f"{method_label(by_id[i]['method'])} · {short(by_id[i]['question'], 60)} · "
            f"{datetime.fromtimestamp(by_id[i]['started']):%Y-%m-%d %H:%M}"
        ),
    )
    if not ids:
        return None
    if len({by_id[i]["question"].strip() for i in ids}) > 1:
        st.warning("These runs answer different questions; choose runs of one question to step them together.")
        return None
    return load(STORE, ids)


def _pick(run_id: str, option: str | None) -> None:
    st.session_state.setdefault(keys.WORKSHOP_PICKS, {})[run_id] = option


def _trust(chosen_ids: set[str]) -> None:
    st.session_state[keys.WORKSHOP_TRUST] = chosen_ids


def _carrier(snippet_id: str | None) -> None:
    st.session_state[keys.WORKSHOP_CARRIER] = snippet_id


def stage(chosen: Chosen, replay: Replay) -> None:
    """The replay, the prediction and, at the end, the reveal; redrawn alone (a fragment) while it plays."""
    p = player(keys.WORKSHOP_PLAYER, replay)
    tick(replay, p)
    controls(replay, p, key=keys.WORKSHOP_CONTROLS)
    revealed = replay.steps[p.step].reveal
    seen = keys.workshop_revealed(",".join(chosen.ids))  # once revealed, predictions stay closed for these runs
    if revealed:  # at the top: the replay above it runs to thousands of pixels
        predict.reveal(
            replay,
            chosen.case,
            picks=st.session_state.get(keys.WORKSHOP_PICKS, {}),
            once_key=seen,
            carrier_pick=st.session_state.get(keys.WORKSHOP_CARRIER),
        )
    else:
        with st.container(border=True):
            predict.predictions(
                replay,
                p.step,
                key=keys.WORKSHOP_CONTROLS,
                picks=st.session_state.get(keys.WORKSHOP_PICKS, {}),
                trusted=st.session_state.get(keys.WORKSHOP_TRUST, set()),
                on_pick=_pick,
                on_trust=_trust,
                locked=bool(st.session_state.get(seen)),
                carrier=st.session_state.get(keys.WORKSHOP_CARRIER),
                on_carrier=_carrier,
            )
    show(replay, p.step, key="solo")
    with st.expander("What if… drop or pin a snippet and re-run (needs the model)", icon=":material/science:"):
        whatif_view.panel(chosen, replay, p.step, key=keys.WHATIF_PANEL)


def page() -> None:
    if room_view.in_a_room():  # the room and nothing else: a participant's screen, or the presenter's projected one
        room_view.view()
        return
    header(
        "Workshop",
        "Replay recorded runs step by step with no model: predict before the reveal, follow a "
        "presenter in a live room, and see what changes when a snippet is dropped or pinned.",
    )
    source, join = st.columns([3, 1], gap="large")
    with join.popover("Join a room", icon=":material/groups:", width="stretch"):
        room_view.join_form()
    with source:
        where = st.segmented_control(
            "Replay",
            ["Recorded workshop pack", "Saved and imported runs"],
            default="Recorded workshop pack",
            key="workshop.source",
        )
    with st.expander("The pack's cases and what each teaches", icon=":material/school:"):
        cases_table()
    chosen = choose_saved() if where == "Saved and imported runs" else choose_from_pack()
    if chosen is not None:
        replayed(chosen)
    whatif_view.progress()  # a what-if re-run stays on screen whatever is replayed now (a reload finds it again)


def replayed(chosen: Chosen) -> None:
    replay = Replay(chosen.runs)
    title = chosen.case.title if chosen.case else short(chosen.runs[0].question, 60)
    if access.current().may(Action.PRESENT) and st.button(
        "Open a live room with these runs",
        icon=":material/co_present:",
        key="workshop.open_room",
        help="You get a short code; participants join it from their own browsers and follow your steps",
    ):
        room_view.open_room(chosen, replay, title)
    playing = player(keys.WORKSHOP_PLAYER, replay).playing
    st.fragment(stage, run_every=TICK_SECONDS if playing else None)(chosen, replay)
