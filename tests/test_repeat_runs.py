"""A repeat served from the response cache says so, names the run that recorded its replies, and can be asked
afresh: every call then reaches the model, and its replies replace the cached ones."""

from __future__ import annotations

from core.engine.llm.cache import ResponseCache
from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from tests.fakes import ScriptedLLM

QUESTION = Question(text="Which hormone lowers glucose?", options={"A": "insulin", "B": "glucagon"})


def test_a_repeat_from_the_cache_says_so_and_names_the_run_that_recorded_it(tmp_path):
    store = RunStore(tmp_path / "studio.sqlite")
    llm = ScriptedLLM(cache=ResponseCache(tmp_path / "cache.sqlite")).on("glucose", {"reasoning": "r", "answer": "A"})
    first = execute("cot", QUESTION, llm=llm, store=store)
    again = execute("cot", QUESTION, llm=llm, store=store)
    assert len(llm.calls) == 1  # the repeat reached no model
    assert not first.totals.cached and again.totals.cached
    assert store.load_run(again.id).totals.cached  # kept with the run, so History and the header know it
    recorded = store.recorded_by(again)
    assert recorded is not None and recorded.id == first.id
    third = execute("cot", QUESTION, llm=llm, store=store)
    assert store.recorded_by(third).id == first.id  # a repeat of a repeat: still the run that made the calls
    other = execute("cot", Question(text="Which hormone raises glucose?", options=QUESTION.options), llm=llm)
    assert not other.totals.cached and store.recorded_by(other) is None


def test_asked_afresh_every_call_reaches_the_model_and_replaces_the_cached_reply(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    store = RunStore(tmp_path / "studio.sqlite")
    llm = ScriptedLLM(cache=cache).enqueue(
        {"reasoning": "first", "answer": "A"}, {"reasoning": "second", "answer": "B"}
    )
    execute("cot", QUESTION, llm=llm, store=store)
    fresh = execute("cot", QUESTION, llm=llm.fresh(), store=store)
    assert len(llm.calls) == 2 and not fresh.totals.cached and fresh.answer.choice == "B"
    assert llm.reads_cache  # the page's model is unchanged: only the fresh run bypassed the cache
    repeat = execute("cot", QUESTION, llm=llm, store=store)
    assert repeat.totals.cached and repeat.answer.choice == "B"  # the fresh reply is the one kept
    assert store.recorded_by(repeat).id == fresh.id
