"""The Benchmark page's "Check a paper's claim": pick a claim (``data/claims/claims.json``), see the paper's figures
and setup, the questions a paired test needs and what the chosen number costs, run both arms as one benchmark job,
and read each arm's accuracy beside the paper's, the paired difference, the verdict and the report to download."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.engine.llm import LLM
from core.engine.llm.embedded import MODEL_NAME
from core.studio.claims import check_claim, check_items, claim_plan, load_claims, sample_size
from core.studio.claims.check import ClaimCheck, per_dataset
from core.studio.claims.estimate import duration, estimate
from core.studio.claims.model import Claim
from core.studio.claims.report import NOT_THE_PAPERS_MODEL, claim_markdown, pct, report
from core.studio.eval import BenchmarkError
from core.studio.eval.runner import finished_rows
from core.studio.pricing import prices
from core.studio.runfiles import dumps, export_runs
from ui.benchmark.questions import benchmark, whole_number
from ui.benchmark.run import current_job, progress_panel, start
from ui.benchmark.setup import Setup
from ui.common import state

VERDICT_BOX = {"consistent": st.success, "opposite": st.error, "smaller": st.warning, "too few": st.info}


def _label(claim: Claim) -> str:
    return f"{claim.id} · {claim.baseline} vs {claim.method}"


def _sizing(claim: Claim, datasets: list[str], llm: LLM, available: int) -> tuple[int, dict[str, float | None]]:
    """The power panel: the questions needed, the number chosen and what it can see and cost. Returns that number
    (0 when none can be sized) and the assumptions the verdict keeps."""
    left, right = st.columns(2, gap="large")
    with left:
        psi = st.number_input(
            "Assumed discordant share, %",
            min_value=1.0,
            max_value=100.0,
            value=None,
            step=1.0,
            key="claims.discordance",
            placeholder="independent errors",
            help="The share of questions on which one arm is right and the other wrong. Papers do not report it; "
            "leave it empty to assume the arms err independently (more questions than usually needed).",
        )
    with right:
        effect = st.number_input(
            "Effect to look for, points",
            value=None,
            step=1.0,
            key="claims.effect",
            placeholder="the paper's",
            help="The difference in accuracy (method minus baseline) to size the check for, where the paper "
            "gives none or you want another.",
        )
    knobs = {"discordance": psi / 100 if psi else None, "effect": effect / 100 if effect is not None else None}
    try:
        size = sample_size(claim, datasets=datasets, **knobs)
    except ValueError as exc:
        st.error(str(exc))
        return 0, knobs
    default = min(size.needed or 30, available)
    n = whole_number(st, "Questions to ask (spread over the datasets)", f"claims.n.{claim.id}.{'.'.join(datasets)}", default, minimum=1,
                     max_value=available)  # fmt: skip
    asked = per_dataset(n, datasets) * len(datasets)
    size = sample_size(claim, asked, datasets=datasets, **knobs)
    store = state.store()
    cost = estimate(store, claim.arms, llm.model_name, asked, prices(store))
    cells = st.columns(4)
    cells[0].metric("Questions needed", f"{size.needed:,}" if size.needed else "–", help="80% power, alpha 0.05")
    cells[1].metric("Power with these", f"{size.power:.0%}" if size.power is not None else "–")
    cells[2].metric("Smallest detectable", pct(size.detectable))
    cells[3].metric(
        "Time",
        duration(cost.seconds) if cost.seconds is not None else "unknown",
        help="Both arms, one question after another, at the pace recorded for them",
    )
    st.markdown("\n".join(f"- {line}" for line in size.lines()))
    st.caption(" · ".join(cost.lines()))
    if size.needed and size.needed > available:
        st.warning(f"These datasets hold {available:,} questions, fewer than the {size.needed:,} needed.")
    return asked, knobs


def _result(check: ClaimCheck, claim: Claim, run_ids: list[str]) -> None:
    VERDICT_BOX.get(check.verdict, st.info)(f"**{check.verdict_text[0].upper()}{check.verdict_text[1:]}.**")
    table = pd.DataFrame(
        [
            {
                "arm": a.arm,
                "accuracy here": pct(a.accuracy),
                "95% CI": f"{pct(a.low)}–{pct(a.high)}",
                "correct": f"{a.correct}/{a.n}",
                "errors": a.errors,
                "paper": pct(a.paper),
            }
            for a in check.arms
        ]
    )
    st.dataframe(table, hide_index=True, width="stretch")
    st.markdown(
        f"Paired difference ({claim.method} − {claim.baseline}) on {check.n} questions: **{check.difference:+.1%}** "
        f"(95% CI {check.low:+.1%} to {check.high:+.1%}); {claim.method} right where {claim.baseline} was wrong "
        f"{check.c} times, the reverse {check.b} times; exact McNemar p = {check.p:.3f}."
    )
    st.markdown("**What differs from the paper's setup**")
    # a static table: its long cells (the retriever) wrap at 1024 px, where a data frame's were cut
    st.table(
        pd.DataFrame(
            [{"paper": r.paper, "here": r.here, "differs": "yes" if r.differs else "no"} for r in check.setup],
            index=[r.what for r in check.setup],
        )
    )
    left, right = st.columns(2)
    left.download_button(
        "Report (Markdown)",
        report(check, claim, f"claim_{claim.id}_runs.json.gz"),
        file_name=f"claim_{claim.id}.md",
        icon=":material/description:",
        key="claims.report",
    )
    right.download_button(
        "Every question's run (run file)",
        lambda: dumps(export_runs(state.store(), run_ids, title=f"claim check {claim.id}")),
        file_name=f"claim_{claim.id}_runs.json.gz",
        icon=":material/download:",
        key="claims.runs",
    )


def claim_view(llm: LLM, corpora: list[str]) -> None:
    """``llm`` answers the check (results are keyed by it); ``corpora`` are the names Settings searches."""
    claims = load_claims()
    if llm.model_name == MODEL_NAME:
        st.info(NOT_THE_PAPERS_MODEL)
    chosen = state.kept(
        st.selectbox,
        "Claim",
        key="claims.pick",
        default=next(iter(claims)),
        options=list(claims),
        format_func=lambda i: _label(claims[i]),
    )
    claim = claims[chosen]
    with st.container(border=True):
        st.markdown(claim_markdown(claim))
    st.markdown("**Questions**")
    bench, name, problem = benchmark()
    if problem:
        st.error(problem)
        return
    datasets = [d for d in claim.datasets if d in bench]
    if not datasets:
        st.error(f"This benchmark has none of the claim's datasets ({', '.join(claim.datasets)}).")
        return
    datasets = st.multiselect("Datasets", datasets, default=datasets, key=f"claims.datasets.{claim.id}") or datasets
    with st.container(border=True):
        st.markdown("**Before spending: how many questions**")
        n, knobs = _sizing(claim, datasets, llm, sum(len(bench[d]) for d in datasets))
    if not n:
        return
    try:
        items = check_items(claim, bench, n, 0, datasets)
    except BenchmarkError as exc:
        st.error(str(exc))
        return
    plan = claim_plan(claim, items)
    rows = finished_rows(plan, state.store(), plan.config_keys(llm.backend, corpora, llm.answer_format))
    job = current_job()
    running = job is not None and job.running
    done = sum(r.arm == claim.method for r in rows)
    finished = done >= len(items)
    label = "Check this claim" if not rows else ("All finished" if finished else f"Resume ({len(items) - done} left)")
    if st.button(
        label,
        type="primary",
        icon=":material/fact_check:",
        key="claims.start",
        disabled=running or finished,
        help="A benchmark is running; stop it first" if running else None,
    ) and start(Setup(plan, f"claim {claim.id} on {name}", 2, "settings")):
        st.rerun()
    if job is not None:
        progress_panel(job)
    st.subheader("The check")
    check = check_claim(claim, rows, **knobs)
    if check.n == 0:
        st.caption("No question has been answered by both arms yet.")
        return
    _result(check, claim, [r.run_id for r in rows])
