"""Compare: two or three methods on the same question, run at the same time, lined up stage by stage.

Each comparison is kept as a group (History lists them); ``/compare?runs=<id>,<id>[,<id>]`` reopens saved runs side
by side, no model needed, and keeps a live comparison on screen across a reload. Runs shown have their own methods,
knobs and question at the top, read-only; "Ask again" opens the form filled with them.
"""

from __future__ import annotations

import streamlit as st

from core.engine.methods import get, registry
from core.engine.store.groups import group_of, save_group
from core.engine.trace import Run
from core.studio.access import Action
from ui.common import access, jobs, keys, state
from ui.common.chrome import header
from ui.common.knobs import knob_inputs, method_label, preset_knobs
from ui.common.text import md, short
from ui.runs.display import load
from ui.runs.header import again_buttons, cached_notice, fresh_knobs, method_block, question_block
from ui.runs.launch import llm_for, runs_go_to, start
from ui.runs.live_panel import follow, live_box
from ui.runs.money import COLUMN_HELP, cost_cell
from ui.runs.pace import before_run
from ui.runs.question_form import preset_question, question_form
from ui.runs.swimlanes import swimlanes
from ui.runs.trace_view import render_run

MAX_RUNS = 3


def agreement(runs: list[Run]) -> str:
    """One line: do the answers agree, and who answered what."""
    answered = [r for r in runs if r.answer is not None]
    if len(answered) < 2:
        return "Fewer than two methods gave an answer, so there is nothing to compare."
    keys = {r.id: (r.answer.choice or " ".join(r.answer.text.lower().split())) for r in answered}
    groups: dict[str, list[str]] = {}
    for r in answered:
        groups.setdefault(keys[r.id], []).append(method_label(r.method))
    if len(groups) == 1:
        choice = answered[0].answer.choice
        same = f": **{md(choice)}**." if choice else "."
        return f":green-badge[agree] All {len(answered)} answers are the same{same}"
    if not answered[0].answer.choice:
        return ":orange-badge[differ] The free-text answers differ in wording; read them side by side below."
    split = " · ".join(f"**{md(k)}** ({', '.join(v)})" for k, v in groups.items())
    return f":red-badge[disagree] {split}"


def _answer(run: Run) -> str:
    if run.answer is None:
        return "—"
    return (f"{run.answer.choice}. " if run.answer.choice else "") + short(run.answer.text, 60)


def summary(runs: list[Run]) -> None:
    st.markdown(agreement(runs))
    st.dataframe(
        [
            {
                "method": method_label(r.method),
                "status": r.status,
                "answer": _answer(r),
                "calls": r.totals.calls,
                "retrievals": r.totals.retrievals,
                "tokens": r.totals.tokens,
                "seconds": round(r.totals.seconds, 1),
                "cost": cost_cell(r),
            }
            for r in runs
        ],
        hide_index=True,
        key="compare-summary",
        column_config={"cost": st.column_config.TextColumn(help=COLUMN_HELP)},
    )


def shown_run_ids() -> list[str]:
    """The runs named in the URL win (a link, a reload); otherwise the ones this tab last started."""
    from_url = st.query_params.get("runs")
    if from_url:
        st.session_state[keys.COMPARE_RUNS] = list(dict.fromkeys(i.strip() for i in from_url.split(",") if i.strip()))
    elif st.session_state.get(keys.COMPARE_RUNS):
        st.query_params["runs"] = ",".join(st.session_state[keys.COMPARE_RUNS])
    return st.session_state.get(keys.COMPARE_RUNS, [])


def _show(ids: list[str], going: bool) -> None:
    """``going``: the runs were drawn as going above (Stop all), so they are followed even if they ended since."""
    if going or any(live is not None and not live.done for live in map(jobs.live, ids)):
        follow(ids)
        return
    found = {i: (live.run if (live := jobs.live(i)) else load(i)) for i in ids}
    missing = [i for i, run in found.items() if run is None]
    if missing:
        st.warning(f"No saved run has the id {', '.join(f'“{i}”' for i in missing)}; showing the others.")
    runs = [run for run in found.values() if run is not None]
    if len(ids) > MAX_RUNS:
        st.warning(f"A comparison shows at most {MAX_RUNS} runs; showing the first {MAX_RUNS}.")
        runs = runs[:MAX_RUNS]
    if not runs:
        return
    for column, live in zip(st.columns(len(runs), gap="small"), map(jobs.live, [r.id for r in runs])):
        if live is not None:
            with column:
                live_box(live)
    summary(runs)
    keep = group_of(state.store(), [r.id for r in runs]) is None and len(runs) > 1
    if keep and st.button("Keep these runs as a comparison", icon=":material/bookmark_add:", key="compare.keep"):
        save_group(state.store(), [r.id for r in runs], short(runs[0].question, 80))
        st.toast("Kept: History lists it under Comparisons.")
    swimlanes(runs, key=keys.COMPARE_FORM)
    st.subheader("Full traces")
    for i, (tab, run) in enumerate(zip(st.tabs([method_label(r.method) for r in runs]), runs)):
        with tab:
            render_run(run, key=f"compare-full-{i}")


def _new() -> None:
    st.session_state.pop(keys.COMPARE_RUNS, None)
    st.query_params.pop("runs", None)


def _again(runs: list[Run]) -> None:
    """The form with the runs' methods, knobs and question, to change and run."""
    methods = registry()
    known = [r for r in runs if r.method in methods]
    state.preset("compare.methods", [r.method for r in known])
    for run in known:
        preset_knobs(
            methods[run.method], key=keys.COMPARE_KNOBS, defaults=state.knob_defaults(run.method), values=run.params
        )
    preset_question(keys.COMPARE_FORM, runs[0].question, runs[0].options)
    _new()


def _form() -> None:
    methods = registry()
    ask, setup = st.columns([3, 2], gap="large")
    with setup:
        chosen = state.kept(
            st.multiselect,
            "Methods (two or three)",
            key="compare.methods",
            default=list(methods)[:2],
            options=list(methods),
            format_func=lambda n: methods[n].label,
            max_selections=MAX_RUNS,
        )
        values = {}
        for name in chosen:
            spec = methods[name]
            st.caption(f"**{spec.label}**: {spec.description}")
            with st.expander(f"{spec.label} knobs"):
                values[name] = knob_inputs(spec, key=keys.COMPARE_KNOBS, defaults=state.knob_defaults(name))
    with ask:
        text, options = question_form(keys.COMPARE_FORM)
        st.caption(f"Runs on {runs_go_to(access.current())}.")
        clicked = st.button(
            "Run all",
            type="primary",
            icon=":material/play_arrow:",
            width="stretch",
            disabled=len(chosen) < 2 or not access.current().may(Action.LIVE_RUN),
            key="compare.go",
            help="Choose at least two methods" if len(chosen) < 2 else None,
        )
        access.notice(Action.LIVE_RUN)
        before_run([methods[name] for name in chosen], llm_for(access.current()))
    if clicked:
        _show_new(start([(methods[name], values[name]) for name in chosen], text, options))


def _show_new(started: list) -> None:
    """Runs just started, kept together as a comparison, replace what was shown."""
    if started:
        ids = [live.id for live in started]
        save_group(state.store(), ids, short(started[0].question.text, 80))
        st.session_state[keys.COMPARE_RUNS] = ids
        st.query_params["runs"] = ",".join(ids)
        st.rerun()


def _asked(runs: list[Run]) -> bool:
    """What the runs shown were asked, read-only: their methods and knobs, the question, Stop while they go; True
    when any was going (a run can end while the page draws: what follows must then follow them)."""
    lives = [live for live in map(jobs.live, [r.id for r in runs]) if live is not None]
    going = [live for live in lives if not live.done]
    ask, setup = st.columns([3, 2], gap="large")
    with setup:
        for run in runs:
            method_block(run)
    with ask:
        question_block(runs[0].question, runs[0].options, key=keys.COMPARE_FORM)
        if len({(r.question, tuple(r.options.items())) for r in runs}) > 1:
            st.warning("These runs were not asked the same question: the one above is the first run's.")
        again_buttons(key=keys.COMPARE_FORM, again=lambda: _again(runs), new=_new)
        jobs.stop_button(going, key="compare.stop", label="Stop all")
        may_run = access.current().may(Action.LIVE_RUN)
        if cached_notice(runs, key=keys.COMPARE_FORM, disabled=bool(going) or not may_run):
            fresh = [(get(r.method), fresh_knobs(r)) for r in runs]
            _show_new(start(fresh, runs[0].question, runs[0].options or None, fresh=True))
    return bool(going)


def page() -> None:
    header("Compare", "Two or three methods on the same question, run at the same time, lined up stage by stage.")
    ids = shown_run_ids()
    if not ids:
        _form()
        return
    found = [live.run if (live := jobs.live(i)) is not None and live.run is not None else load(i) for i in ids]
    if not any(found):
        st.warning(f"No saved run has the id {', '.join(f'“{i}”' for i in ids)}. History lists every saved run.")
        _new()
        _form()
        return
    going = _asked([run for run in found if run is not None])
    _show(ids, going)
