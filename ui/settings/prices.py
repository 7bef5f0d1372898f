"""Settings' model prices: what the user pays a provider per million tokens of each model, kept in the studio's
database, so that runs show what they cost. The studio ships no price; the embedded model is free."""

from __future__ import annotations

import streamlit as st
from pydantic import ValidationError

from core.engine.store.prices import model_runs
from core.studio.pricing import CURRENCIES, EMBEDDED_MODEL, MAX_PRICE, Price, prices, rate, remove_price, save_price
from ui.common import keys, state
from ui.common.text import md


def _save(model: str) -> None:
    inp, out, currency = (st.session_state.get(k) for k in keys.price_inputs(model))
    if inp is None or out is None:
        st.session_state[keys.PRICES_SAID] = (
            "error",
            "Model prices: enter both the input and the output price (0 for free).",
        )
        return
    try:
        price = Price(model=model, input_per_m=inp, output_per_m=out, currency=currency or "USD")
        save_price(state.store(), price)
    except ValidationError as exc:
        problems = "; ".join(f"{e['loc'][0]}: {e['msg']}" for e in exc.errors())
        st.session_state[keys.PRICES_SAID] = ("error", f"Model prices: {problems}.")
        return
    except ValueError as exc:
        st.session_state[keys.PRICES_SAID] = ("error", f"Model prices: {exc}.")
        return
    st.session_state[keys.PRICES_SAID] = ("success", f"Saved: {price.model} at {price.rates}.")


def _remove(model: str) -> None:
    remove_price(state.store(), model)
    for key in keys.price_inputs(model):
        st.session_state.pop(key, None)
    st.session_state[keys.PRICES_SAID] = ("success", f"Removed the price of {model}: its runs show no cost now.")


def _table(table: dict[str, Price], used: dict[str, int]) -> None:
    if not table:
        st.caption("No price is set yet.")
        return
    st.dataframe(
        [
            {
                "model": p.model,
                "input per M tokens": rate(p.input_per_m, p.currency),
                "output per M tokens": rate(p.output_per_m, p.currency),
                "runs": used.get(p.model, 0),
            }
            for p in table.values()
        ],
        hide_index=True,
        key="prices.table",
    )


def _follow(configured: str | None, offered: list[str]) -> None:
    """The picker shows the model the Model tab configured, as soon as it is configured (a keyed picker would keep
    what it showed when the page opened); one picked by hand stays until another is configured. An empty picker
    takes the first model offered."""
    if configured and st.session_state.get(keys.PRICES_FOLLOWED) != configured:
        st.session_state[keys.PRICES_FOLLOWED] = configured
        st.session_state[keys.PRICES_MODEL] = configured
    elif offered and not st.session_state.get(keys.PRICES_MODEL):
        st.session_state[keys.PRICES_MODEL] = offered[0]


def prices_section(editable: bool = True) -> None:
    """The price list, and (``editable``) a form to set or remove a model's price."""
    store = state.store()
    table, used = prices(store), model_runs(store)
    st.caption(
        "What your provider charges per million tokens of each model, as you pay it: the studio ships no "
        "price. Runs then show their cost on their trace, in Compare, History and on the Benchmark page, for "
        "the tokens the provider billed (calls answered from the response cache cost nothing). A model "
        f"with no price shows no money figure; the embedded model ({EMBEDDED_MODEL}) is free. From the "
        "command line: `python -m core prices`."
    )
    _table(table, used)
    missing = [m for m in used if m not in table and m != EMBEDDED_MODEL]
    if missing:
        st.markdown("Used without a price: " + ", ".join(f"**{md(m)}** \\({used[m]} runs\\)" for m in missing))
    if said := st.session_state.pop(keys.PRICES_SAID, None):
        (st.success if said[0] == "success" else st.error)(said[1])
    if not editable:
        return
    upcoming = state.llm().model_name  # what the next run will record as its model
    configured = upcoming if upcoming and upcoming != EMBEDDED_MODEL else None
    offered = list(dict.fromkeys([*([configured] if configured else []), *missing, *table]))
    _follow(configured, offered)
    model = st.selectbox(
        "Model",
        offered,
        index=0 if offered else None,
        key=keys.PRICES_MODEL,
        accept_new_options=True,
        placeholder="type a model name, as your endpoint calls it",
        help="The model name a run records (History shows it under each run).",
    )
    if not model:
        return
    model = model.strip()
    current = table.get(model)
    inp, out, currency = keys.price_inputs(model)
    left, middle, right = st.columns([2, 2, 1])
    rates = (
        (left, "Input", current.input_per_m if current else None, inp, "0.15"),
        (middle, "Output", current.output_per_m if current else None, out, "0.60"),
    )
    for column, which, value, key, example in rates:
        column.number_input(
            f"{which}, per million tokens",
            min_value=0.0,
            max_value=MAX_PRICE,
            step=0.05,
            format="%.4f",
            value=value,
            key=key,
            placeholder=f"e.g. {example}",
        )
    currencies = list(dict.fromkeys([*CURRENCIES, *([current.currency] if current else [])]))  # one set elsewhere
    right.selectbox("Currency", currencies, index=currencies.index(current.currency) if current else 0, key=currency)
    save, remove, _ = st.columns([1, 1, 2])
    save.button(
        "Save price",
        type="primary",
        icon=":material/save:",
        key="prices.save",
        on_click=_save,
        args=(model,),
        width="stretch",
    )
    if current is not None:
        remove.button(
            "Remove price",
            icon=":material/delete:",
            key="prices.remove",
            on_click=_remove,
            args=(model,),
            width="stretch",
        )
