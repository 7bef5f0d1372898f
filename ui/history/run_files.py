"""Run files on the History page: download saved runs as one .json.gz, upload one to import it, and a mark on a
run that came from a file."""

from __future__ import annotations

import time
from datetime import datetime

import streamlit as st

from core.engine.store import RunStore
from core.studio.access import Action
from core.studio.runfiles import RunFileError, dumps, export_runs, import_file, provenance
from ui.common import access, keys
from ui.common.knobs import method_label
from ui.common.text import md, short


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def imported_mark(store: RunStore, run_id: str | None) -> None:
    row = provenance.lookup(store, run_id) if run_id else None
    if row and row["imported_at"] is not None:
        st.caption(
            f":material/move_to_inbox: Run {run_id} was imported from **{md(row['source'] or 'a file')}** "
            f"on {_when(row['imported_at'])}" + (f" (backend: {md(row['backend'])})" if row["backend"] else "")
        )


def _import(store: RunStore) -> None:
    upload = st.session_state.get(keys.HISTORY_UPLOAD)
    if upload is None or st.session_state.get(keys.HISTORY_IMPORTED) == upload.file_id:
        return
    st.session_state[keys.HISTORY_IMPORTED] = upload.file_id
    if problem := access.current().refusal(Action.IMPORT_RUNS):
        st.session_state[keys.HISTORY_FILES_SAID] = ("error", f"{problem} Nothing was imported.")
        return
    try:
        report = import_file(store, upload, name=upload.name)
    except RunFileError as exc:
        st.session_state[keys.HISTORY_FILES_SAID] = ("error", f"{upload.name}: {exc}. Nothing was imported.")
        return
    st.session_state[keys.HISTORY_FILES_SAID] = ("success", report.summary())


def _file(store: RunStore, chosen: list[str], kind: str | None) -> bytes:
    """The run file, made when it is downloaded: only of runs this session may export (asked again here)."""
    mine = [i for i in chosen if access.may_manage(i, say=False)]
    return dumps(export_runs(store, mine, kind=kind))


def files_panel(store: RunStore) -> None:
    """Export and import, in one expander; the open run's imported mark above it."""
    imported_mark(store, st.query_params.get("run") or st.session_state.get(keys.HISTORY_OPEN))
    now = access.current()
    rows = [r for r in store.list_runs(limit=1000) if now.may(Action.MANAGE_RUNS) or access.mine(r["id"])]
    with st.expander("Run files: download runs, or import a file", icon=":material/swap_horiz:"):
        left, right = st.columns(2, gap="large")
        with left:
            if not now.may(Action.MANAGE_RUNS):
                st.caption(
                    ":material/lock: You can download the runs you started in this browser; the owner "
                    "holds everyone else's."
                )
            by_id = {r["id"]: r for r in rows if r["status"] != "running"}  # a run still going has no file yet
            going = len(rows) - len(by_id)
            opened = st.session_state.get(keys.HISTORY_OPEN)
            chosen = st.multiselect(
                "Runs to download",
                list(by_id),
                key="history.files.runs",
                default=[opened] if opened in by_id else None,
                format_func=lambda i: f"{method_label(by_id[i]['method'])} · {short(by_id[i]['question'], 50)} · {i}",
            )
            together = st.checkbox("One comparison (the same question side by side)", key="history.files.together")
            kind = "comparison" if together else None
            try:  # made now, not on the click: the file is ready when the button is, so no click is lost
                data, problem = (_file(store, chosen, kind), None) if chosen else (b"", None)
            except RunFileError as exc:
                data, problem = b"", str(exc)
            st.download_button(
                "Download run file",
                data=data,
                file_name=f"medrag-runs-{time.strftime('%Y%m%d-%H%M')}.json.gz",
                mime="application/gzip",
                icon=":material/download:",
                disabled=not data,
                key="history.files.download",
                on_click="ignore",
            )
            if problem:
                st.error(f"{problem}.")
            if going:
                st.caption(f"Left out until it ends: {going} run{'s' if going != 1 else ''} still going.")
            st.caption(
                "Everything a screen draws travels with the runs (snippet texts included); "
                "no key or password ever does."
            )
        with right:
            if access.notice(Action.IMPORT_RUNS):
                st.file_uploader(
                    "Import a run file (.json.gz)",
                    type=["gz"],
                    key=keys.HISTORY_UPLOAD,
                    on_change=_import,
                    args=(store,),
                )
            kind_, message = st.session_state.get(keys.HISTORY_FILES_SAID, (None, None))
            if message:
                (st.error if kind_ == "error" else st.success)(message)
