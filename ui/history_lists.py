"""History's two short lists above the table: runs still going (follow one live, stop it) and kept comparisons
(reopen one side by side)."""

from __future__ import annotations

import time
from typing import Any

import streamlit as st

from ui.knobs import method_label
from ui.links import page_link
from ui.live import live_runs
from ui.live_panel import stop_button
from ui.text import md, short


def running_now(rows: list[dict[str, Any]]) -> None:
    """This server's live runs, and runs another process is writing (saved as running), newest first."""
    registry = live_runs()
    going = [r for r in rows if r["status"] == "running"]
    if not going:
        return
    st.markdown(f"**Running now** · {len(going)}")
    for row in going:
        live = registry.get(row["id"])
        text, follow, stop = st.columns([6, 2, 2], vertical_alignment="center")
        where = "this server" if live else "another process: follow it here, stop it where it was started"
        text.markdown(f":orange-badge[running] **{md(method_label(row['method']))}** · "
                      f"{md(short(row['question'], 80))} :gray[· {time.time() - row['started']:.0f} s · {where}]")
        with follow:
            page_link("history", "Follow live", icon=":material/visibility:", run=row["id"])
        with stop:
            stop_button([live] if live else [], key=f"history.stop.{row['id']}")


def comparisons(groups: list[dict[str, Any]], runs: dict[str, dict[str, Any]]) -> None:
    """Kept comparisons, each a link that reopens its runs side by side."""
    shown = [g for g in groups if len(g["run_ids"]) > 1]
    if not shown:
        return
    with st.expander(f"Comparisons · {len(shown)}", icon=":material/view_column:"):
        for group in shown:
            methods = " · ".join(method_label(m) for m in group["methods"])
            text, link = st.columns([7, 2], vertical_alignment="center")
            started = min(runs[i]["started"] for i in group["run_ids"] if i in runs) if runs else group["created"]
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(started))
            text.markdown(f"**{md(methods)}** · {md(short(group['title'], 90))} :gray[· {when}]")
            with link:
                page_link("compare", "Open side by side", icon=":material/open_in_new:", runs=",".join(group["run_ids"]))
