"""Predict before the reveal: pick the option each method will choose and, if you like, the snippets you would
trust; then the reveal, with the teaching pack's key, its teaching note and where the method met the case's key,
near-miss and outdated passages."""

from __future__ import annotations

from collections.abc import Callable

import plotly.graph_objects as go
import streamlit as st
import streamlit.components.v1 as components

from core.studio.rooms import Tally
from core.studio.teaching import ROLE_WORDS, TeachingCase
from core.studio.workshop.carrier import carriers
from core.studio.workshop.marks import marks_line, retrieved, teaching_marks
from core.studio.workshop.replay import Replay
from ui.common import keys
from ui.common.knobs import method_label
from ui.common.text import md, short

ROLE_BADGES = {"key": "green", "near_miss": "orange", "outdated": "red"}


def predictions(
    replay: Replay,
    step: int,
    *,
    key: str,
    picks: dict[str, str],
    trusted: set[str],
    on_pick: Callable[[str, str | None], None],
    on_trust: Callable[[set[str]], None],
    locked: bool = False,
    carrier: str | None = None,
    on_carrier: Callable[[str | None], None] | None = None,
) -> None:
    """The prediction widgets for this step; the callbacks keep each change (in the session or the room). Once the
    answer has been revealed they are locked: stepping back shows the picks, it does not reopen them."""
    run = replay.runs[0]
    if locked:
        chosen = [f"{method_label(r.method)} **{md(picks[r.id])}**" for r in replay.runs if picks.get(r.id)]
        st.markdown(
            ":material/lock: Predictions are closed: the answer has been revealed. "
            + (f"Yours: {', '.join(chosen)}." if chosen else "You made none.")
        )
        return
    if not run.options:
        st.caption("A free-text question: nothing to pick. Watch the steps, then reveal.")
    for r in replay.runs if run.options else []:
        options = list(r.options)
        current = picks.get(r.id)
        st.radio(
            f"Which option will **{md(method_label(r.method))}** choose?",
            options,
            horizontal=True,
            index=options.index(current) if current in options else None,
            key=keys.prediction(key, r.id),
            format_func=lambda o, r=r: f"{o}. {short(r.options[o], 40)}",
            on_change=lambda r=r: on_pick(r.id, st.session_state.get(keys.prediction(key, r.id))),
        )
    hits = {h.snippet_id: h for h in replay.hits_shown(step)}
    if hits:
        st.pills(
            "Snippets you would trust (optional)",
            list(hits),
            selection_mode="multi",
            default=[i for i in trusted if i in hits],
            key=keys.trusted(key),
            format_func=lambda i: short(hits[i].title or i, 60),
            on_change=lambda: on_trust(set(st.session_state.get(keys.trusted(key)) or [])),
        )
        if on_carrier is not None:
            st.pills(
                "Which snippet will carry the answer? (the one whose words the answer rests on most)",
                list(hits),
                selection_mode="single",
                default=carrier if carrier in hits else None,
                key=keys.carrier(key, step),
                format_func=lambda i: short(hits[i].title or i, 60),
                on_change=lambda: on_carrier(st.session_state.get(keys.carrier(key, step))),
            )


def tally_chart(replay: Replay, tally: Tally) -> None:
    """The room's picks per method and the snippets most trusted so far (for the presenter)."""
    st.markdown(
        f"**{tally.predicted} of {tally.members} participants** have picked an option"
        + (f" · {tally.changed_mind} changed their mind" if tally.changed_mind else "")
    )
    for run in replay.runs:
        counts = tally.predictions.get(run.id, {})
        letters = list(run.options)
        figure = go.Figure(
            go.Bar(x=[counts.get(o, 0) for o in letters], y=letters, orientation="h", marker_color="#0f766e")
        )
        figure.update_layout(
            height=70 + 26 * len(letters),
            margin={"l": 0, "r": 10, "t": 24, "b": 0},
            title={"text": f"picks for {method_label(run.method)}", "font_size": 13},
            xaxis={"dtick": 1, "rangemode": "tozero", "range": [0, max(1, tally.members)]},
            yaxis={"autorange": "reversed"},
        )
        st.plotly_chart(figure, key=f"tally.{run.id}", config={"displayModeBar": False})
    titles = {h.snippet_id: h.title for h in replay.hits_shown(replay.last)}
    if tally.trust:
        rows = sorted(tally.trust.items(), key=lambda kv: -kv[1][0])
        st.dataframe(
            [{"snippet": short(titles.get(i, i), 70), "trusted by": yes} for i, (yes, _) in rows], hide_index=True
        )


def _mark_rows(replay: Replay, index: int, case: TeachingCase) -> list[str]:
    lines = []
    for mark in teaching_marks(replay.runs[index], case):
        badge = f":{ROLE_BADGES[mark.role]}-badge[{ROLE_WORDS[mark.role]}]"
        where = (
            f"met at step {replay.step_of(index, mark.met_at)} (best rank #{mark.rank})"
            if mark.met
            else "never retrieved"
        )
        cited = " · **cited**" if mark.cited else ""
        line = f"- {badge} {md(mark.title)}: {where}{cited}"
        if mark.superseded_by:
            line += f"\n  - :gray[since revised: {md(mark.superseded_by)}]"
        lines.append(line)
    return lines


def personal_tally(replay: Replay, case: TeachingCase | None, picks: dict[str, str]) -> str:
    """e.g. 'Your predictions: right for 2 of 3 methods · the teaching key in 1 of your 3 picks.'"""
    picked = [r for r in replay.runs if picks.get(r.id) and r.answer and r.answer.choice]
    if not picked:
        return "You made no prediction this time."
    right = sum(picks[r.id] == r.answer.choice for r in picked)
    n, plural = len(picked), "s" if len(picked) != 1 else ""
    line = f"Your predictions: right for {right} of {n} method{plural}"
    if case is not None:
        line += f" · the teaching key in {sum(picks[r.id] == case.answer for r in picked)} of your {n} pick{plural}"
    return line + "."


def outcome_line(run, case: TeachingCase | None, pick: str | None, room: dict[str, int] | None) -> str:
    """One method's choice and what it is measured against, each in its own words: 'MASS-RAG chose B, not the key
    (C) · you predicted A: it chose otherwise · the room predicted A 2, B 1'."""
    if not (run.answer and run.answer.choice):
        chose = md(short(run.answer.text, 120)) if run.answer else f"no answer ({run.status})"
        parts = [f"**{md(method_label(run.method))}** answered {chose}"]
    else:
        choice = run.answer.choice
        keyed = (
            ""
            if case is None
            else (
                " :green-badge[the teaching key]"
                if choice == case.answer
                else f" :red-badge[not the key ({md(case.answer)})]"
            )
        )
        parts = [f"**{md(method_label(run.method))}** chose **{md(choice)}**{keyed}"]
        if pick:
            parts.append(
                f"you predicted **{md(pick)}**: "
                + (":green-badge[as you predicted]" if pick == choice else ":orange-badge[it chose otherwise]")
            )
    if room:
        parts.append("the room predicted " + ", ".join(f"{md(o)} {n}" for o, n in room.items()))
    return " · ".join(parts)


def carrier_line(run, pick: str | None) -> str:
    """What carried one method's answer, against the pick: 'carried by Aspirin in STEMI (supports 2 of its sentences)
    · you predicted it'."""
    found = carriers(run)
    name = f"**{md(method_label(run.method))}**"
    if not found:
        return f"{name}: no snippet carried its answer (it used no document)" + (" · you predicted one" if pick else "")
    top = found[0]
    if top.how == "linked":
        said = f"{len(top.claims)} of its answer's sentences" if len(top.claims) > 1 else "its answer"
        how = f"its words support {said}"
    else:
        how = "the answer cites it; the evidence linker found no sentence it supports"
    line = f"{name}'s answer was carried by **{md(top.title)}** ({md(top.doc_id)}: {how})"
    if pick:
        also = next((i for i, c in enumerate(found) if c.doc_id == pick), None)
        line += (
            " · :green-badge[as you predicted]"
            if also == 0
            else f" · :orange-badge[you predicted another{', its no. ' + str(also + 1) if also else ''}]"
        )
    return line


def scroll_to_reveal(once_key: str) -> None:
    """Bring the reveal to the top of the screen the first time it is drawn (a long replay leaves people far
    below it); later redraws leave the scroll where the reader put it."""
    if st.session_state.get(once_key):
        return
    st.session_state[once_key] = True
    components.html(
        "<script>const el = window.parent.document.querySelector('.st-key-ws-reveal');"
        "if (el) { el.scrollIntoView({block: 'start'}); }</script>",
        height=0,
    )


def reveal(
    replay: Replay,
    case: TeachingCase | None,
    *,
    picks: dict[str, str] | None = None,
    tally: Tally | None = None,
    once_key: str = "",
    carrier_pick: str | None = None,
) -> None:
    """What each method chose, against the key and against the picks (a personal tally first), then the teaching
    pack's key, note and passage marks."""
    with st.container(key="ws-reveal", border=True):
        st.subheader("The reveal")
        if picks is not None:
            st.markdown(f":material/person: **{personal_tally(replay, case, picks)}**")
        for run in replay.runs:
            room = tally.predictions.get(run.id) if tally else None
            st.markdown(outcome_line(run, case, (picks or {}).get(run.id), room))
        # the linker reads every claim against every snippet: seconds a run, so it runs when asked for
        if st.toggle(
            "Which snippet carried each answer?" + (" (you predicted one)" if carrier_pick else ""),
            key="ws-carrier-reveal",
            help="The snippet whose words the answer and its rationale rest on most, by the evidence linker",
        ):
            with st.spinner("Linking each answer's sentences to the snippets (offline, seconds a run)…"):
                lines = [carrier_line(run, carrier_pick) for run in replay.runs]
            st.markdown("\n\n".join(f":material/format_quote: {line}" for line in lines))
        if case is None:
            st.caption("Not a teaching-pack case, so there is no key to compare with.")
        else:
            st.markdown(f"**Teaching pack key: {md(case.answer)}.** {md(case.options[case.answer])}")
            st.markdown(md(case.teaching_note))
            for index, run in enumerate(replay.runs):
                st.markdown(
                    f"**Where {md(method_label(run.method))} met the case's passages:** {md(marks_line(run, case))}"
                )
                if retrieved(run):
                    st.markdown("\n".join(_mark_rows(replay, index, case)))
    if once_key:
        scroll_to_reveal(once_key)
