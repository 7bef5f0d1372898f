"""History: every saved run; reopen one and see exactly the trace it had, or delete it. What is running now is
listed first (every job of this server, and runs another process writes: follow one, stop one), and kept
comparisons reopen side by side.

``/history?run=<id>`` opens History on that run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import streamlit as st

from core.engine.store.groups import list_groups
from ui.common import access, keys, state
from ui.common.chrome import header
from ui.common.knobs import method_label
from ui.common.text import short
from ui.history.lists import comparisons, running_now
from ui.history.run_files import files_panel
from ui.runs.display import show_run
from ui.runs.money import COLUMN_HELP, run_costs

STATUSES = ("ok", "error", "cancelled", "interrupted", "running")
# the long texts get set widths (cut with an ellipsis, whole on hover), so the table fits 1440 px whole
COLUMNS = {
    "question": st.column_config.TextColumn(width="medium"),
    "answer": st.column_config.TextColumn(width="medium"),
    "LLM calls": st.column_config.NumberColumn(width="small"),
    "tokens": st.column_config.NumberColumn(width="small"),
    "seconds": st.column_config.NumberColumn(width="small", format="%.1f"),
    "cost": st.column_config.TextColumn(width="small", help=COLUMN_HELP),
    "run": st.column_config.TextColumn(width="small"),
}


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")


def _answer(row: dict[str, Any]) -> str:
    answer = row["answer"] or {}
    return (f"{answer['choice']}. " if answer.get("choice") else "") + short(answer.get("text", ""), 60) or "—"


def _table(rows: list[dict[str, Any]]) -> None:
    costs = run_costs(rows)
    st.dataframe(
        [
            {  # the figures before the texts, so a narrow window cuts a question, not a number
                "started": _when(r["started"]),
                "method": method_label(r["method"]),
                "status": r["status"],
                "seconds": round(r["totals"].get("seconds", 0.0), 1),
                "LLM calls": r["totals"].get("calls", 0),
                "tokens": r["totals"].get("prompt_tokens", 0) + r["totals"].get("completion_tokens", 0),
                "cost": costs[r["id"]].short(),
                "answer": _answer(r),
                "question": short(r["question"], 90),
                "run": r["id"],
            }
            for r in rows
        ],
        hide_index=True,
        key="history-table",
        height=min(38 + 35 * len(rows), 320),
        column_config=COLUMNS,
    )


def _ask_to_delete(run_id: str) -> None:
    st.session_state[keys.HISTORY_CONFIRM] = run_id


def _keep() -> None:
    st.session_state.pop(keys.HISTORY_CONFIRM, None)


def _delete(run_id: str) -> None:
    if not access.may_manage(run_id):
        return
    state.store().delete_run(run_id)
    st.session_state.pop(keys.HISTORY_CONFIRM, None)
    st.session_state.pop(keys.HISTORY_OPEN, None)
    st.query_params.pop("run", None)
    st.toast(f"Deleted run {run_id}.")


def _opened() -> None:
    st.query_params["run"] = st.session_state[keys.HISTORY_OPEN]


def page() -> None:
    header("History", "Every run is saved with its whole trace. Reopen one to see exactly what it did.")
    store = state.store()
    files_panel(store)
    every = store.list_runs(limit=1000)
    running_now(every)
    if not every:
        st.info("No runs yet. Ask a question on the Ask page and it will appear here.")
        return
    comparisons(list_groups(store), {r["id"]: r for r in every})
    left, middle, right = st.columns(3)
    method = left.selectbox(
        "Method",
        [None, *sorted({r["method"] for r in every})],
        key="history.method",
        format_func=lambda m: "All methods" if m is None else method_label(m),
    )
    status = middle.selectbox(
        "Status", [None, *STATUSES], key="history.status", format_func=lambda s: "Any status" if s is None else s
    )
    words = right.text_input("Question contains", key="history.words").strip().lower()
    rows = [
        r
        for r in store.list_runs(limit=1000, method=method)
        if (status is None or r["status"] == status) and words in r["question"].lower()
    ]
    st.caption(f"{len(rows)} of {len(every)} runs")
    linked = st.query_params.get("run")
    if linked and linked not in {r["id"] for r in every}:
        st.warning(f"No saved run has the id “{linked}”. It may have been deleted.")
        linked = None
    if not rows and not linked:
        st.info("No saved run matches these filters.")
        return
    _table(rows)
    by_id = {r["id"]: r for r in rows}
    if linked:  # a link opens its run, even one the filters hide
        by_id.setdefault(linked, next(r for r in every if r["id"] == linked))
        st.session_state[keys.HISTORY_OPEN] = linked
    run_id = st.selectbox(
        "Open a run",
        list(by_id),
        key=keys.HISTORY_OPEN,
        on_change=_opened,
        format_func=lambda i: (
            f"{_when(by_id[i]['started'])} · {method_label(by_id[i]['method'])} · {by_id[i]['status']} · "
            f"{short(by_id[i]['question'], 70)}"
        ),
    )
    run = store.load_run(run_id)
    st.divider()
    title, action = st.columns([4, 1], vertical_alignment="center")
    title.subheader(f"{method_label(run.method)} · {_when(run.started)}")
    if st.session_state.get(keys.HISTORY_CONFIRM) == run.id:
        action.button("Yes, delete it", type="primary", key="history.delete_yes", on_click=_delete, args=(run.id,))
        st.warning(f"Delete run {run.id} and its {len(run.events)} events for good?")
        st.button("Keep it", key="history.delete_no", on_click=_keep)
    elif access.may_manage(run.id, say=False):
        action.button(
            "Delete run", icon=":material/delete:", key="history.delete", on_click=_ask_to_delete, args=(run.id,)
        )
    knobs = ", ".join(f"{k}={v}" for k, v in run.params.items()) or "defaults"
    st.caption(f"Run {run.id} · model {run.model or '—'} · corpus {', '.join(run.corpus) or 'none'} · knobs: {knobs}")
    show_run(run.id, key="history", stop=True, show_question=True)
