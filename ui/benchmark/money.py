"""The Benchmark page's money axis: accuracy (with its Wilson interval) against the mean cost per question (with its
t-interval), for the arms whose model has a price; arms with none are named instead of plotted."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import streamlit as st

from core.studio.eval.money import ArmMoney, money_lines
from core.studio.eval.report import ALL
from core.studio.eval.results import ItemResult
from core.studio.pricing import billed_by_run, prices
from ui.benchmark.plots import front_figure
from ui.common import state
from ui.common.text import md

MONEY = "money"
Label = Callable[[str], str]


# why an arm is left off the plot, by its state
LEFT_OUT = {
    "unpriced": lambda m: f"no price is set for {md(', '.join(m.unpriced))} \\(Settings → Model prices\\)",
    "currencies": lambda m: "its questions are priced in more than one currency",
    "priced": lambda m: f"priced in {m.currency}, not in the currency of the others",
}


def _notes(shown: list[ArmMoney], left_out: list[ArmMoney], label: Label) -> list[str]:
    notes = [f"**{md(label(m.arm))}**: not plotted, {LEFT_OUT[m.state](m)}" for m in left_out if m.state in LEFT_OUT]
    notes += [
        f"**{md(label(m.arm))}**: the embedded model, free \\(local\\): plotted at 0"
        for m in shown
        if m.state == "free"
    ]
    notes += [
        f"**{md(label(m.arm))}**: {m.cached_calls} of {m.calls + m.cached_calls} calls were answered from the "
        "response cache and not billed, so a fresh run would cost more"
        for m in shown
        if m.cached_calls
    ]
    return notes


def money_plot(summary: list[dict[str, Any]], rows: list[ItemResult], label: Label, dataset: str = ALL) -> None:
    store = state.store()
    found = money_lines(summary, rows, billed_by_run(store, [r.run_id for r in rows]), prices(store))
    here = [m for m in found if m.dataset == dataset] or found
    currency = next(iter(Counter(m.currency for m in here if m.currency).most_common(1)), (None,))[0]
    shown = [m for m in here if m.state == "free" or (m.state == "priced" and m.currency == currency)]
    left_out = [m for m in here if m not in shown]
    if not any(m.state == "priced" for m in shown):
        free = all(m.state == "free" for m in here)
        st.info(
            "These runs used the embedded model, which costs nothing: there is no money to plot."
            if free
            else "No arm here can be priced yet: set a price for its model under Settings → Model prices (what "
            "your provider charges per million tokens) and the arms appear here."
        )
        if not free:
            st.markdown("\n".join(f"- {note}" for note in _notes([], left_out, label)))
        return
    lines = {(s["arm"], s["dataset"]): s for s in summary}
    points = [{**lines[(m.arm, m.dataset)], **m.as_fields()} for m in shown]
    title = f"cost per question, {currency} (95% t-interval)"
    st.plotly_chart(
        front_figure(points, label, "mean_money", title, x_format=",.6~f"),
        key="bench.plot.money",
        config={"displayModeBar": False},
    )
    st.caption(
        "Cost: each question's run at its model's price, for the tokens the provider billed; the horizontal "
        "bars are 95% t-intervals of the mean over the questions."
    )
    if notes := _notes(shown, left_out, label):
        st.markdown("\n".join(f"- {note}" for note in notes))
