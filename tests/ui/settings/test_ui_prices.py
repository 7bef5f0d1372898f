"""Prices on screen: the editor Settings shows, the cost column of History and Compare, the line under a trace's
totals, and the Benchmark's money axis; every figure from runs made through the real runner and store."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from core.engine.llm.cache import ResponseCache
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from core.engine.trace import Run
from core.studio.pricing import EMBEDDED_MODEL, Price, billed, money, prices, run_cost, save_price
from tests.fakes import ScriptedLLM
from tests.ui.benchmark.test_ui_benchmark import answering, bench, finish, no_jobs, page  # noqa: F401 (fixtures)
from ui.common.keys import LLM_OVERRIDE

MC = Question(text="Which drug treats disease 1?", options={"A": "aspirin", "B": "metformin"})
MINI = Price(model="scripted", input_per_m=2.5, output_per_m=10.0)


def plain(text: str) -> str:
    return text.replace("\\", "")


def runs(tmp_path) -> tuple[Run, Run, Run, Run]:
    """A run on a priced model, the same run again from the response cache, one on a model with no price and one
    on the embedded model (saved as imported runs are)."""
    store = RunStore()
    llm = ScriptedLLM(cache=ResponseCache(tmp_path / "cache.sqlite")).enqueue({"reasoning": "r", "answer": "A"})
    fresh, cached = (execute("cot", MC, llm=llm, store=store) for _ in range(2))
    unpriced = fresh.model_copy(update={"id": "unpriced0001", "model": "gpt-4o", "started": fresh.started + 2})
    local = fresh.model_copy(update={"id": "embedded0001", "model": EMBEDDED_MODEL, "started": fresh.started + 3})
    for run in (unpriced, local):
        store.create_run(run.model_copy(update={"events": []}))
        for event in run.events:
            store.append_event(event.model_copy(update={"run_id": run.id}))
        store.finish_run(run)
    return fresh, cached, unpriced, local


def test_the_editor_sets_and_removes_a_price_for_a_model_runs_used():
    execute("cot", MC, llm=answering("A"), store=RunStore())
    at = AppTest.from_string(
        "from ui.settings.prices import prices_section\nprices_section()", default_timeout=20
    ).run()
    assert not at.exception
    assert "Used without a price: **scripted** \\(1 runs\\)" in [m.value for m in at.markdown]
    assert at.selectbox(key="prices.model").value == "scripted"
    at.number_input(key="prices.input.scripted").set_value(0.15)
    at.button(key="prices.save").click().run()
    assert at.error[0].value == "Model prices: enter both the input and the output price (0 for free)."
    assert prices(RunStore()) == {}
    at.number_input(key="prices.output.scripted").set_value(0.6)
    at.selectbox(key="prices.currency.scripted").set_value("EUR")
    at.button(key="prices.save").click().run()
    assert at.success[0].value == "Saved: scripted at €0.15/€0.60 per M."
    assert prices(RunStore()) == {
        "scripted": Price(model="scripted", input_per_m=0.15, output_per_m=0.6, currency="EUR")
    }
    table = at.dataframe[0].value
    assert table.to_dict("records") == [
        {"model": "scripted", "input per M tokens": "€0.15", "output per M tokens": "€0.60", "runs": 1}
    ]
    at.button(key="prices.remove").click().run()
    assert prices(RunStore()) == {} and at.success[0].value.startswith("Removed the price of scripted")


def test_a_visitor_sees_the_prices_but_no_form():
    save_price(RunStore(), MINI)
    at = AppTest.from_string(
        "from ui.settings.prices import prices_section\nprices_section(editable=False)", default_timeout=20
    ).run()
    assert not at.exception and len(at.dataframe) == 1
    assert not at.selectbox and not at.button


def test_history_lists_each_runs_cost_and_its_trace_says_how_it_was_reached(tmp_path):
    fresh, cached, unpriced, local = runs(tmp_path)
    save_price(RunStore(), MINI)
    at = AppTest.from_string("from ui.history.page import page\npage()", default_timeout=20).run()
    assert not at.exception
    table = at.dataframe[0].value
    expected = money(run_cost(fresh, {"scripted": MINI}).amount, "USD")
    assert dict(zip(table["run"], table["cost"])) == {
        fresh.id: expected,
        cached.id: "$0.00",
        unpriced.id: "no price",
        local.id: "free (local)",
    }
    spent = billed(fresh.events)
    lines = {}
    for run in (fresh, cached, unpriced, local):
        at = AppTest.from_string("from ui.history.page import page\npage()", default_timeout=20)
        at.query_params["run"] = run.id  # History's link to the run
        at.run()
        lines[run.id] = [plain(c.value) for c in at.caption if ":material/payments:" in c.value]
    assert lines[fresh.id] == [
        f":material/payments: Cost {expected} · {spent.prompt_tokens} in / "
        f"{spent.completion_tokens} out at $2.50/$10.00 per M (scripted)"
    ]
    assert lines[cached.id] == [
        ":material/payments: Cost $0.00 · 0 in / 0 out at $2.50/$10.00 per M · 1 call "
        "answered from the response cache, not billed (scripted)"
    ]
    assert lines[unpriced.id] == [
        ":material/payments: No price is set for gpt-4o, so no cost is shown: add one under Settings → Model prices."
    ]
    assert lines[local.id] == []  # the embedded model: nothing to pay, nothing said


def test_compare_gives_each_methods_cost(tmp_path):
    fresh, _, unpriced, _ = runs(tmp_path)
    save_price(RunStore(), MINI)
    at = AppTest.from_string("from ui.compare.page import page\npage()", default_timeout=20)
    at.query_params["runs"] = f"{fresh.id},{unpriced.id}"
    at.run()
    assert not at.exception
    summary = at.dataframe[0].value
    assert list(summary["cost"]) == [money(run_cost(fresh, {"scripted": MINI}).amount, "USD"), "no price"]


def test_the_benchmark_plots_accuracy_against_money_once_its_model_has_a_price(bench):  # noqa: F811
    path, _ = bench
    at = finish(page(path, answering("A"), **{"bench.cost": "money"}).button(key="bench.start").click().run())
    assert not at.exception
    assert at.info[0].value.startswith("No arm here can be priced yet")
    assert "bench.plot.money" not in [c.key for c in at.get("plotly_chart")]
    assert "- **CoT**: not plotted, no price is set for scripted \\(Settings → Model prices\\)" in [
        m.value for m in at.markdown
    ]
    save_price(RunStore(), MINI)
    at.run()
    charts = [c for c in at.get("plotly_chart") if c.key == "bench.plot.money"]
    assert not at.exception and len(charts) == 1
    store = RunStore()
    each = [run_cost(store.load_run(r["id"]), {"scripted": MINI}).amount for r in store.list_runs()]
    points = [t for t in json.loads(charts[0].proto.spec)["data"] if t.get("mode") == "markers+text"]
    assert [p["x"] for p in points] == [[pytest.approx(sum(each) / len(each))]] and [p["y"] for p in points] == [[0.6]]
    assert points[0]["error_x"]["array"][0] > 0  # the mean's interval, beside the accuracy's
    assert "cost per question, USD (95% t-interval)" in charts[0].proto.spec


def test_the_model_runs_will_use_is_offered_before_any_run_but_never_the_embedded_one():
    at = AppTest.from_string("from ui.settings.prices import prices_section\nprices_section()", default_timeout=20)
    at.run()  # the embedded model answers: nothing to price yet
    assert at.selectbox(key="prices.model").options == [] and not at.number_input
    at = AppTest.from_string("from ui.settings.prices import prices_section\nprices_section()", default_timeout=20)
    at.session_state[LLM_OVERRIDE] = ScriptedLLM()
    at.run()
    assert at.selectbox(key="prices.model").options == ["scripted"] and len(at.number_input) == 2


def test_the_model_configured_a_moment_ago_on_the_model_tab_is_the_one_prices_offer_first():
    at = AppTest.from_string("from ui.settings.page import page\npage()", default_timeout=30)
    at.run()
    execute("cot", MC, llm=answering("A"), store=RunStore())  # a run on a model with no price yet
    at.run()
    assert at.selectbox(key="prices.model").value == "scripted"
    at.radio(key="settings.mode").set_value("OpenAI-compatible endpoint").run()
    at.text_input(key="settings.base_url").input("http://localhost:8000/v1").run()
    at.text_input(key="settings.model").input("served-model").run()
    picker = at.selectbox(key="prices.model")
    assert picker.options[0] == "served-model" and picker.value == "served-model"
    assert at.number_input(key="prices.input.served-model").value is None  # its price, ready to type
    picker.set_value("scripted").run()  # picked by hand: it stays until the configured model changes again
    assert at.selectbox(key="prices.model").value == "scripted"
    at.text_input(key="settings.model").input("other-model").run()
    assert at.selectbox(key="prices.model").value == "other-model"
