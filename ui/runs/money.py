"""What runs cost in money, on screen: a line under a trace's totals and a cell in History's and Compare's tables.

A run on the embedded model shows nothing on its trace (there is nothing to pay) and "free (local)" in a table
cell; a run on a model with no price says so, never a 0.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.engine.trace import Run
from core.studio.pricing import Billed, Cost, Price, billed_by_run, cost_of, prices, run_cost
from ui.common import state
from ui.common.text import md

COLUMN_HELP = (
    "What the run cost at its model's price (Settings → Model prices), for the tokens the provider "
    'billed; calls answered from the response cache are free. "no price": none is set for its model.'
)


def current_prices() -> dict[str, Price]:
    return prices(state.store())


def cost_line(run: Run) -> None:
    """The run's cost with what it was computed from, under its totals."""
    cost = run_cost(run, current_prices())
    if cost.state == "free":
        return
    if cost.state == "unpriced":
        st.caption(
            f":material/payments: No price is set for {md(run.model or 'this model')}, so no cost is shown: "
            "add one under Settings → Model prices."
        )
        return
    st.caption(f":material/payments: Cost {md(cost.basis())} \\({md(run.model)}\\)")


def cost_cell(run: Run) -> str:
    return run_cost(run, current_prices()).short()


def run_costs(rows: list[dict[str, Any]]) -> dict[str, Cost]:
    """Run id -> cost, for saved runs as the store lists them (one query for all of them)."""
    store = state.store()
    spent, table = billed_by_run(store, [r["id"] for r in rows]), prices(store)
    return {r["id"]: cost_of(r["model"], spent.get(r["id"], Billed()), table) for r in rows}
