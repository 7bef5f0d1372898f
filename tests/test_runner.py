"""The runner's promises, with a scripted model: every run ends with answer or error, and keeps its trace."""

from core.engine.question import Question
from core.engine.runner import execute
from core.engine.store import RunStore
from tests.fakes import ScriptedLLM

MC = Question(text="Which hormone lowers glucose?", options={"A": "Insulin", "B": "Glucagon"})


def test_cot_answers_and_persists(tmp_path):
    llm = ScriptedLLM().enqueue({"reasoning": "Insulin lowers glucose.", "answer": "A"})
    store = RunStore(tmp_path / "s.sqlite")
    seen = []
    run = execute("cot", MC, llm=llm, store=store, sinks=[seen.append])
    assert run.status == "ok" and run.answer.choice == "A" and run.answer.text == "Insulin"
    assert [e.kind for e in seen] == ["agent_message", "answer"]
    assert run.totals.calls == 1 and run.totals.prompt_tokens > 0
    assert store.load_run(run.id) == run


def test_unparseable_reply_ends_in_an_error_event_with_the_trace_kept(tmp_path):
    llm = ScriptedLLM().enqueue("I think A", "still prose")
    store = RunStore(tmp_path / "s.sqlite")
    run = execute("cot", MC, llm=llm, store=store)
    assert run.status == "error" and run.answer is None
    assert run.events[-1].kind == "error" and "could not be parsed" in run.events[-1].payload.message
    assert len(llm.calls) == 2  # the reply and one repair
    assert store.load_run(run.id).events[-1].kind == "error"
    # the unusable reply and what both attempts cost are in the trace, before the error
    failed = run.events[-2]
    assert failed.kind == "agent_message" and failed.payload.text == "still prose" and failed.payload.data is None
    assert failed.usage.calls == 2 and run.totals.calls == 2 and run.totals.prompt_tokens > 0


def test_answer_outside_the_options_is_refused():
    llm = ScriptedLLM().enqueue({"reasoning": "r", "answer": "Z"}, {"reasoning": "r", "answer": "B"})
    run = execute("cot", MC, llm=llm)
    assert run.status == "ok" and run.answer.choice == "B"


def test_bad_knob_is_refused_before_anything_is_sent():
    import pytest
    from pydantic import ValidationError

    llm = ScriptedLLM()
    with pytest.raises(ValidationError):
        execute("cot", MC, {"max_tokens": -1}, llm=llm)
    assert llm.calls == []
