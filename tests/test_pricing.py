"""Cost in money: the tokens a provider billed (cached calls free) at the user's price per million tokens; no figure
for a model with no price; the embedded model free; benchmark means with their interval; the price list in the
store (a database from before prices upgrades in place) and on the command line."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import sqlite_utils
from pydantic import ValidationError
from scipy import stats

from core.__main__ import main
from core.engine.llm.cache import ResponseCache
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from core.engine.store.migrations import MIGRATIONS
from core.engine.trace import AgentMessage, Event, Retrieval, Run, Usage
from core.studio.eval.money import mean_interval, money_lines
from core.studio.eval.report import summarize
from core.studio.pricing import (
    EMBEDDED_MODEL,
    Billed,
    Price,
    billed,
    billed_by_run,
    cost_of,
    money,
    prices,
    rate,
    remove_price,
    run_cost,
    save_price,
)
from tests.fakes import ScriptedLLM, item_result

MC = Question(text="Which drug treats disease 1?", options={"A": "aspirin", "B": "metformin"})
MINI = Price(model="scripted", input_per_m=2.5, output_per_m=10.0)


def test_a_run_pays_for_what_the_provider_answered_and_nothing_for_cached_calls(tmp_path):
    store = RunStore()
    llm = ScriptedLLM(cache=ResponseCache(tmp_path / "cache.sqlite")).enqueue({"reasoning": "r", "answer": "A"})
    fresh, again = (execute("cot", MC, llm=llm, store=store) for _ in range(2))
    assert [e.usage.cached for e in again.events if e.usage.calls] == [True]  # the same call, from the cache
    usage = next(e.usage for e in fresh.events if e.usage.calls)
    table = {"scripted": MINI}
    first, second = run_cost(fresh, table), run_cost(again, table)
    assert first.amount == pytest.approx((usage.prompt_tokens * 2.5 + usage.completion_tokens * 10.0) / 1e6)
    assert first.basis() == (
        f"{money(first.amount, 'USD')} · {usage.prompt_tokens} in / {usage.completion_tokens} out at $2.50/$10.00 per M"
    )
    assert second.amount == 0.0 and again.totals.tokens == fresh.totals.tokens  # the trace still counts its tokens
    assert second.basis().endswith("· 1 call answered from the response cache, not billed")
    # many runs read from the store at once: the same figures as from the runs in hand
    assert billed_by_run(store, [fresh.id, again.id, "gone"]) == {
        fresh.id: billed(fresh.events),
        again.id: billed(again.events),
    }


def test_a_mixed_run_prices_input_and_output_apart_and_skips_cached_calls_and_retrievals():
    def event(seq: int, **usage) -> Event:
        return Event(
            run_id="r",
            seq=seq,
            stage="s",
            agent="a",
            usage=Usage(**usage),
            payload=AgentMessage(text="x") if usage.get("calls") else Retrieval(query="q", hits=[]),
        )

    run = Run(
        id="r",
        method="medrag",
        question="q",
        model="gpt-4o",
        events=[
            event(0, calls=1, prompt_tokens=12_000, completion_tokens=2_000),
            event(1, retrievals=1, seconds=0.3),
            event(2, calls=1, prompt_tokens=345, completion_tokens=345, cached=True),
            event(3, calls=2, prompt_tokens=345, completion_tokens=0),  # a refused attempt and its retry
        ],
    )
    assert billed(run.events) == Billed(prompt_tokens=12_345, completion_tokens=2_000, calls=3, cached_calls=1)
    cost = run_cost(run, {"gpt-4o": Price(model="gpt-4o", input_per_m=2.5, output_per_m=10.0)})
    assert cost.amount == pytest.approx(12_345 * 2.5e-6 + 2_000 * 10e-6)
    assert cost.basis() == (
        "$0.0509 · 12,345 in / 2,000 out at $2.50/$10.00 per M · 1 call answered from the response cache, not billed"
    )


def test_no_price_gives_no_figure_and_the_embedded_model_is_free():
    spent = Billed(prompt_tokens=1000, completion_tokens=100, calls=1)
    unpriced = cost_of("gpt-4o-mini", spent, {"scripted": MINI})
    assert (unpriced.state, unpriced.amount, unpriced.currency) == ("unpriced", None, None)
    assert unpriced.short() == "no price" and unpriced.basis() == "no price set for gpt-4o-mini"
    local = cost_of(EMBEDDED_MODEL, spent, {})
    assert (local.state, local.amount, local.short()) == ("free", 0.0, "free (local)")
    with pytest.raises(ValueError, match="embedded model"):
        save_price(RunStore(), MINI.model_copy(update={"model": EMBEDDED_MODEL}))


def test_figures_carry_their_currency_and_enough_digits():
    assert [money(a, "USD") for a in (0.0123, 0.000042, 1.234, 1234.5678, 0.0)] == [
        "$0.0123",
        "$0.0000420",
        "$1.23",
        "$1,234.57",
        "$0.00",
    ]
    assert money(0.5, "EUR") == "€0.500" and money(2, "CHF") == "CHF 2.00"
    assert [rate(p, "USD") for p in (2.5, 0.075, 10, 0.00015)] == ["$2.50", "$0.075", "$10.00", "$0.00015"]
    assert Price(model=" gpt-4o ", input_per_m=1, output_per_m=2, currency="GBP").rates == "£1.00/£2.00 per M"
    for bad in (
        {"input_per_m": -1},
        {"output_per_m": math.inf},
        {"currency": "usd"},
        {"model": "  "},
        {"input_per_m": 1e6},
    ):
        with pytest.raises(ValidationError):
            Price.model_validate({"model": "m", "input_per_m": 1, "output_per_m": 1, **bad})


def test_benchmark_arms_get_a_mean_cost_with_its_interval_or_say_why_not():
    unspent = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}  # the totals a row keeps for a deleted run
    rows = [
        item_result(arm="cot", dataset=d, qid=str(i), run_id=f"c{i}", model="scripted", **unspent)
        for i, d in enumerate(["a", "a", "b"])
    ]
    rows += [replace(r, arm="medrag", method="medrag", run_id=f"m{i}", model="gpt-4o") for i, r in enumerate(rows)]
    rows += [replace(r, arm="local", run_id=f"e{i}", model=EMBEDDED_MODEL) for i, r in enumerate(rows[:3])]
    spent = {"c0": Billed(1000, 100, 1), "c1": Billed(2000, 300, 1), "c2": Billed(0, 0, 0, cached_calls=1)}
    # c2's run was a cache hit; e-runs are absent (deleted): their rows' totals stand in
    found = {(m.arm, m.dataset): m for m in money_lines(summarize(rows), rows, spent, {"scripted": MINI})}
    each = [(1000 * 2.5 + 100 * 10) / 1e6, (2000 * 2.5 + 300 * 10) / 1e6, 0.0]
    line = found[("cot", "all")]
    assert (line.state, line.currency, line.n, line.calls, line.cached_calls) == ("priced", "USD", 3, 2, 1)
    mean, sem = sum(each) / 3, stats.sem(each)
    low, high = stats.t.interval(0.95, 2, loc=mean, scale=sem)
    assert (line.mean, line.low, line.high) == pytest.approx((mean, max(low, 0), high))
    assert found[("cot", "a")].mean == pytest.approx(sum(each[:2]) / 2)
    assert found[("cot", "b")].low is None  # one question: no interval
    assert found[("medrag", "all")].state == "unpriced" and found[("medrag", "all")].unpriced == ("gpt-4o",)
    assert found[("medrag", "all")].mean is None
    assert (found[("local", "all")].state, found[("local", "all")].mean) == ("free", 0.0)
    assert mean_interval([0.5, 0.5]) == (0.5, 0.5, 0.5)


def test_a_database_from_before_prices_upgrades_in_place(tmp_path):
    """A file as the studio wrote it before prices (every migration up to 8), with a saved run in it."""
    path = tmp_path / "studio.sqlite"
    db = sqlite_utils.Database(path)
    db["_migrations"].create({"version": int, "name": str, "applied": float}, pk="version")
    for version, name, step in MIGRATIONS:
        if version < 9:
            step(db)
            db["_migrations"].insert({"version": version, "name": name, "applied": 0.0})
    run = execute("cot", MC, llm=ScriptedLLM().enqueue({"reasoning": "r", "answer": "A"}))
    db["runs"].insert(RunStore._run_row(run))
    db["events"].insert_all(RunStore._event_row(e) for e in run.events)
    db.conn.close()

    store = RunStore(path)
    assert [r["version"] for r in store.db["_migrations"].rows] == [v for v, _, _ in MIGRATIONS]
    assert store.load_run(run.id).events == run.events
    assert prices(store) == {}
    save_price(store, MINI)
    assert prices(RunStore(path)) == {"scripted": MINI}
    assert run_cost(store.load_run(run.id), prices(store)).amount == run_cost(run, {"scripted": MINI}).amount > 0
    assert remove_price(store, "scripted") and not remove_price(store, "scripted")


def test_the_command_line_sets_lists_and_removes_prices(capsys):
    execute("cot", MC, llm=ScriptedLLM().enqueue({"reasoning": "r", "answer": "A"}), store=RunStore())
    assert main(["prices"]) == 0
    assert capsys.readouterr().out == "no price is set\nused without a price: scripted (1 runs)\n"
    assert main(["prices", "set", "scripted", "--input", "0.15", "--output", "0.6", "--currency", "eur"]) == 0
    assert capsys.readouterr().out == "scripted: €0.15/€0.60 per M\n"
    assert main(["prices"]) == 0
    assert capsys.readouterr().out == "scripted: €0.15 per M input, €0.60 per M output (1 runs)\n"
    assert main(["prices", "set", "x", "--input", "-1", "--output", "nan"]) == 2
    assert capsys.readouterr().err == (
        "error: --input: Input should be greater than or equal to 0; --output: Input should be a finite number\n"
    )
    assert main(["prices", "remove", "scripted"]) == 0 and main(["prices", "remove", "scripted"]) == 2
    assert prices(RunStore()) == {}


def test_ask_on_the_command_line_ends_with_the_runs_cost(capsys, monkeypatch):
    monkeypatch.setattr("core.studio.cli.ask.LLM", lambda: ScriptedLLM().enqueue({"reasoning": "r", "answer": "A"}))
    save_price(RunStore(), MINI)
    assert main(["ask", MC.text, "--option", "A=aspirin", "--option", "B=metformin"]) == 0
    run = RunStore().load_run(RunStore().list_runs()[0]["id"])
    spent = billed(run.events)
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert last == (
        f"cost: {money(run_cost(run, {'scripted': MINI}).amount, 'USD')} · {spent.prompt_tokens} in / "
        f"{spent.completion_tokens} out at $2.50/$10.00 per M"
    )
