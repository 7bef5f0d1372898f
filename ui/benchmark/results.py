"""The Benchmark page's results: the table with intervals and errors, the plots, the paired tests, and the
drill-down from a cell to its questions and from a question to its run's trace (History) or to two arms' runs
side by side (Compare)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from typing import Any
from urllib.parse import quote

import streamlit as st

from core.studio.eval import BenchItem
from core.studio.eval.answers import answer_shares, leans_found
from core.studio.eval.citations import CITATION_NOTE, citations_of
from core.studio.eval.report import ACCURACY_NOTE, ALL, pairwise, rate_text, summarize
from core.studio.eval.results import ItemResult
from core.studio.eval.stats import overall_reading
from ui.benchmark.money import MONEY, money_plot
from ui.benchmark.plots import COSTS, accuracy_figure, cost_figure, mcnemar_figure
from ui.common import keys, state
from ui.common.text import short

Label = Callable[[str], str]
CITATIONS = ("citation_precision", "citation_recall")


def _keyed(name: str, options: list[str]) -> str:
    """A widget key that changes with its options: while a benchmark runs, a dataset or pooled choice appears
    ("all" once a second dataset has answers), and a box keyed by name alone would keep showing the first option it
    was drawn with instead of the default the new list brings."""
    return f"{name}:{'|'.join(options)}"


def history_link(run_id: str) -> str:
    return f"/history?run={quote(run_id)}"


def compare_link(*run_ids: str) -> str:
    return f"/compare?runs={','.join(quote(r) for r in run_ids)}"


def _picked_in_table() -> None:
    rows = st.session_state[keys.BENCH_SUMMARY]["selection"]["rows"]
    if rows:
        st.session_state[keys.BENCH_CELL] = st.session_state[keys.BENCH_CELLS][rows[0]]


def _table(summary: list[dict[str, Any]], label: Label) -> dict[str, Any] | None:
    """The summary; the line (a cell: arm × dataset) picked in it or by name, if any."""
    shown = [
        {
            "arm": label(s["arm"]),
            "dataset": s["dataset"],
            "accuracy": 100 * s["accuracy"],
            "95% CI": f"{s['ci_low']:.1%}–{s['ci_high']:.1%}",
            "correct / n": f"{s['correct']} / {s['n']}",
            "errors": s["errors"],
            "unparseable": s["parse_errors"],
            "LLM calls": s["mean_calls"],
            "retrievals": s["mean_retrievals"],
            "tokens": s["mean_tokens"],
            "seconds": s["mean_seconds"],
            **({k: rate_text(s, k) for k in CITATIONS} if CITATIONS[0] in s else {}),
        }
        for s in summary
    ]
    cells = {f"{s['arm']}|{s['dataset']}": s for s in summary}
    st.session_state[keys.BENCH_CELLS] = list(cells)
    st.dataframe(
        shown,
        hide_index=True,
        key=keys.BENCH_SUMMARY,
        on_select=_picked_in_table,
        selection_mode="single-row",
        height=min(38 + 35 * len(shown), 38 + 35 * 30),  # every line in view, up to 30
        column_config={
            "arm": st.column_config.TextColumn("arm", width="medium"),
            "accuracy": st.column_config.ProgressColumn("accuracy", format="%.1f%%", min_value=0, max_value=100),
            "errors": st.column_config.NumberColumn("errors", help="runs that ended in error: counted as not correct"),
            "LLM calls": st.column_config.NumberColumn("LLM calls", help="mean per question", format="%.1f"),
            "retrievals": st.column_config.NumberColumn("retrievals", help="mean per question", format="%.1f"),
            "tokens": st.column_config.NumberColumn(
                "tokens", help="mean prompt + completion tokens per question", format="%,.0f"
            ),
            "seconds": st.column_config.NumberColumn("seconds", help="mean per question", format="%.1f"),
        },
    )
    st.caption(ACCURACY_NOTE + (f" {CITATION_NOTE}" if summary and CITATIONS[0] in summary[0] else ""))
    if st.session_state.get(keys.BENCH_CELL) not in cells:
        st.session_state[keys.BENCH_CELL] = None
    picked = st.selectbox(
        "Questions of",
        [None, *cells],
        key=keys.BENCH_CELL,
        format_func=lambda c: (
            "select a line of the table, or pick one here"
            if c is None
            else f"{label(cells[c]['arm'])} · {cells[c]['dataset']}"
        ),
    )
    return cells[picked] if picked else None


def _questions(rows: list[ItemResult], cell: dict[str, Any], items: dict[tuple, BenchItem], label: Label) -> None:
    arm, dataset = cell["arm"], cell["dataset"]
    mine = [r for r in rows if r.arm == arm and dataset in (ALL, r.dataset)]
    others = [a for a in dict.fromkeys(r.arm for r in rows) if a != arm]
    st.markdown(
        f"**{label(arm)} · {dataset}**: {cell['correct']} of {cell['n']} correct, {cell['errors']} "
        "ended in error. A question's trace opens in History; with a second arm, both runs open in Compare."
    )
    other = st.selectbox(
        "Compare with",
        [None, *others],
        key="bench.compare_with",
        format_func=lambda a: ("no second arm" if a is None else label(a)),
    )
    theirs = {(r.dataset, r.qid, r.asked): r for r in rows if r.arm == other}
    table = []
    for r in mine:
        key = (r.dataset, r.qid, r.asked)
        item = items.get(key)
        line = {
            "dataset": r.dataset,
            "id": r.qid,
            "trace": history_link(r.run_id),
            "question": short(item.question.text, 90) if item else "",
            "gold": r.gold,
            "answer": r.predicted or "—",
            "correct": bool(r.correct),
            "status": r.status if not r.error_type else f"{r.status} ({r.error_type})",
            "LLM calls": r.calls,
            "tokens": r.prompt_tokens + r.completion_tokens,
            "seconds": round(r.seconds, 1),
        }
        if other is not None:
            mate = theirs.get(key)
            line[f"{label(other)} answer"] = (mate.predicted or "—") if mate else "not run"
            line["compare"] = compare_link(r.run_id, mate.run_id) if mate else None
        table.append(line)
    # the links come first and the question has a set width, so neither is cut off at 1440 or 1024 px
    st.dataframe(
        table,
        hide_index=True,
        key="bench.questions",
        column_config={
            "question": st.column_config.TextColumn("question", width="medium"),
            "correct": st.column_config.CheckboxColumn("correct"),
            "trace": st.column_config.LinkColumn("trace", display_text="open in History"),
            "compare": st.column_config.LinkColumn("compare", display_text="open both in Compare"),
        },
    )


def _options_chosen(rows: list[ItemResult], label: Label) -> None:
    found = answer_shares(rows)
    options = sorted({o for a in found for o in a.options})
    st.dataframe(
        [
            {
                "arm": label(a.arm),
                "dataset": a.dataset,
                "answered": a.answered,
                **{o: (f"{a.chosen.get(o, 0)} / {a.gold.get(o, 0)}" if o in a.options else "") for o in options},
                "Stuart–Maxwell p": "too few to test" if a.p is None else f"{a.p:.3f}",
            }
            for a in found
        ],
        hide_index=True,
    )
    st.markdown("\n".join(f"- {line}" for line in leans_found(found, label)))
    st.caption(
        "Each option: times the arm chose it / times it was the right answer, on the questions the arm "
        'answered. A reader that says one option whatever the question ("yes" to every yes/no question '
        "whose snippets are on topic) shows here. Stuart–Maxwell tests that the two counts share one "
        "distribution; it is rough on few questions and cannot be computed when too few answers differ."
    )


def results(rows: list[ItemResult], items: list[BenchItem], label: Label) -> None:
    if not rows:
        st.info(
            "No question of this setup has finished yet: start the benchmark, or change the setup to one that "
            "ran before (the command line's results count too)."
        )
        return
    cite = st.toggle(
        "Citation precision and recall",
        key="bench.citations",
        help="Links every finished run's claims to the snippets it cites, offline (seconds a run).",
    )
    with st.spinner("Linking each run's claims to its citations…") if cite else nullcontext():
        summary = summarize(rows, citations_of(state.store(), [r.run_id for r in rows]) if cite else None)
    arms = list(dict.fromkeys(r.arm for r in rows))
    cell = _table(summary, label)
    if cell is not None:
        _questions(rows, cell, {i.key: i for i in items}, label)
    tests = pairwise(rows)
    accuracy, cost, paired, chosen = st.tabs(
        ["Accuracy by dataset", "Accuracy against cost", "Paired tests", "Options chosen"]
    )
    with chosen:
        _options_chosen(rows, label)
    with accuracy:
        st.plotly_chart(accuracy_figure(summary, label), key="bench.plot.accuracy", config={"displayModeBar": False})
    with cost:
        left, right = st.columns(2)
        measure = left.segmented_control("Cost per question", [*COSTS, MONEY], default="tokens", key="bench.cost")
        datasets = list(dict.fromkeys(s["dataset"] for s in summary))
        dataset = right.selectbox(
            "Dataset", datasets, index=len(datasets) - 1, key=_keyed("bench.cost_dataset", datasets)
        )
        if measure == MONEY:
            money_plot(summary, rows, label, dataset)
        else:
            st.plotly_chart(
                cost_figure(summary, label, measure or "tokens", dataset),
                key="bench.plot.cost",
                config={"displayModeBar": False},
            )
        st.caption(
            "Diamonds joined by the dotted line are the Pareto front: no other arm is both cheaper (or as "
            "cheap) and more accurate (or as accurate). Bars are 95% Wilson intervals."
        )
    with paired:
        if len(arms) < 2:
            st.caption("Run two or more arms on the same questions to compare them pairwise.")
            return
        scope = st.selectbox(
            "Questions",
            list(tests),
            key=_keyed("bench.pairs_scope", list(tests)),
            format_func=lambda d: "all datasets pooled" if d == ALL else d,
        )
        st.markdown(f"**{overall_reading(tests[scope], label)}**")
        st.plotly_chart(
            mcnemar_figure(tests[scope], arms, label), key="bench.plot.mcnemar", config={"displayModeBar": False}
        )
        st.caption(
            "Each cell: exact McNemar p-value over the questions both arms finished; b/c = questions only "
            "the row's arm got right / only the column's; agree = share with the same outcome (both right or "
            "both not). Errors count as not right. p-values are not adjusted for the number of pairs."
        )
        st.dataframe(
            [
                {
                    "first": label(p.first),
                    "second": label(p.second),
                    **{k: v for k, v in p.as_dict().items() if k not in ("first", "second")},
                    "reading": p.reading(label),
                }
                for p in tests[scope]
            ],
            hide_index=True,
            key="bench.pairs",
        )
