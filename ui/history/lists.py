"""History's two short lists above the table: what is running now, in one place (every job of this server, and runs
another process is writing: follow one, stop one) and kept comparisons (reopen one side by side)."""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import streamlit as st

from core.engine.jobs import Job
from core.engine.live_run import LiveRun
from core.engine.llm.model_start import ModelStart
from core.engine.retrieval.background import BackgroundBuild
from core.studio.access import Action
from core.studio.eval.job import EvalJob
from core.studio.workshop.whatif import WhatIfRun
from ui.common import access, jobs
from ui.common.knobs import method_label
from ui.common.links import page_link
from ui.common.text import md, short


class Follow(NamedTuple):
    """Where a kind of job is followed: a page, the page's query name for the job's id, who may open it."""

    of: type[Job]
    page: str
    query: str | None
    action: Action


FOLLOW = [
    Follow(WhatIfRun, "workshop", "whatif", Action.REPLAY),  # before LiveRun: a what-if re-run is one too
    Follow(LiveRun, "history", "run", Action.REPLAY),
    Follow(EvalJob, "benchmark", None, Action.BENCHMARK),
    Follow(BackgroundBuild, "settings", None, Action.SETTINGS),  # the default corpus's is in the sidebar too
    Follow(ModelStart, "settings", None, Action.SETTINGS),
]


def running_now(rows: list[dict[str, Any]]) -> None:
    """Every job this server runs (live runs, what-if re-runs, benchmarks, index builds), from its job runner, then
    runs another process is writing (saved as running): newest first."""
    going, held = jobs.runner().running(), {job.id for job in jobs.runner().jobs()}
    elsewhere = [r for r in rows if r["status"] == "running" and r["id"] not in held]
    if not going and not elsewhere:
        return
    st.markdown(f"**Running now** · {len(going) + len(elsewhere)}")
    for job in going:
        _job(job)
    for row in elsewhere:
        text, follow, _ = st.columns([6, 2, 2], vertical_alignment="center")
        text.markdown(
            f":orange-badge[running] **{md(method_label(row['method']))}** · "
            f"{md(short(row['question'], 80))} :gray[· {time.time() - row['started']:.0f} s · another "
            "process: follow it here, stop it where it was started]"
        )
        with follow:
            page_link("history", "Follow live", icon=":material/visibility:", run=row["id"])


def _job(job: Job) -> None:
    text, follow, stop = st.columns([6, 2, 2], vertical_alignment="center")
    summary = job.summary()
    about = f" · {md(short(job.detail, 80))}" if job.detail else ""
    badge = ":orange-badge[stopping]" if job.stop_requested else ":orange-badge[running]"
    text.markdown(
        f"{badge} :gray-badge[{job.kind}] **{md(short(job.label, 80))}**{about} :gray[· "
        f"{md(summary.text)} · {job.elapsed:.0f} s]"
    )
    if summary.fraction is not None:
        text.progress(summary.fraction)
    where = next((f for f in FOLLOW if isinstance(job, f.of)), None)
    if where is not None and access.current().may(where.action):
        with follow:
            page_link(
                where.page,
                "Follow live",
                icon=":material/visibility:",
                **({where.query: job.id} if where.query else {}),
            )
    with stop:
        if job.cancellable:
            jobs.stop_button([job], key=f"history.stop.{job.id}")
        else:
            st.caption("cannot be stopped midway")


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
                page_link(
                    "compare", "Open side by side", icon=":material/open_in_new:", runs=",".join(group["run_ids"])
                )
