"""Asking the same again: the repeat served from the response cache says so in the run's header, with when and in
how long its replies were recorded, and "Run fresh" beside it asks the model again (the same knobs for a greedy
method, a new seed for one that samples)."""

from __future__ import annotations

from core.engine.llm.cache import ResponseCache
from core.engine.methods import get
from core.engine.store import RunStore
from core.engine.trace import Run
from tests.fakes import ScriptedLLM, until_runs_end
from tests.ui.explore.test_ui_ask import ask_page, click_run, fill, text_of
from tests.waiting import wait_until
from ui.runs.header import fresh_knobs

REPLY = {"reasoning": "Insulin lowers blood glucose.", "answer": "A"}


def notice(at) -> str:
    return "\n".join(m.value for m in at.markdown if "Served from the cache" in m.value)


def test_a_repeat_says_it_came_from_the_cache_and_run_fresh_asks_the_model(tmp_path):
    llm = ScriptedLLM(cache=ResponseCache(tmp_path / "cache.sqlite")).on("Think step by step", REPLY)
    at = click_run(fill(ask_page(llm), "Which hormone lowers blood glucose?", ["Insulin", "Glucagon"]))
    first = at.query_params["run"]
    assert not notice(at) and not any(b.label == "Run fresh" for b in at.button)  # it reached the model
    # a repeat ends within the click's own redraw, before anything waits for it: one more redraw shows it ended
    at = click_run(at.button(key="ask.again").click().run()).run()
    assert at.query_params["run"] != first and len(llm.calls) == 1
    made = RunStore().load_run(first)
    assert "Served from the cache — recorded" in notice(at) and f"took {made.totals.seconds:.0f} s" in notice(at)
    assert at.status[0].label.startswith("CoT: served from the cache in")
    said = "\n".join(c.value for c in at.caption)
    assert "greedy (temperature 0), so the model writes the same reply again" in said
    at = at.button(key="ask.fresh").click().run()
    wait_until(lambda: len(llm.calls) == 2, "the fresh run's call to reach the model")
    at = until_runs_end(at)
    fresh = RunStore().load_run(at.query_params["run"])
    assert fresh.id not in (first,) and fresh.params == made.params and not fresh.totals.cached
    assert not notice(at) and '<span class="letter">A</span>Insulin' in text_of(at)


def test_asked_afresh_a_sampling_method_draws_a_new_seed_and_a_greedy_one_keeps_its_knobs():
    sema = Run(method="sema", question="q", params=get("sema").params().model_dump())
    cot = Run(method="cot", question="q", params=get("cot").params().model_dump())
    assert fresh_knobs(sema)["seed"] != sema.params["seed"]
    assert {k: v for k, v in fresh_knobs(sema).items() if k != "seed"} == {
        k: v for k, v in sema.params.items() if k != "seed"
    }
    assert fresh_knobs(cot) == cot.params
