"""The model's queue as the process sees it: a call beyond the backend's slots waits, and says behind how many runs;
a served call reads its prompt, then writes; calls leave the queue when they end, however they end."""

from __future__ import annotations

import threading

import pytest

from core.engine.call_queue import CallQueue
from core.engine.question import Question
from core.engine.runner import execute
from tests.fakes import ScriptedLLM
from tests.waiting import Gate, patience, wait_until

MC = Question(text="Which hormone lowers blood glucose?", options={"A": "Insulin", "B": "Glucagon"})


def test_calls_beyond_the_slots_wait_behind_the_runs_ahead_and_are_served_in_order():
    queue = CallQueue()
    where = {"backend": "m", "where": "the embedded model", "slots": 2}
    with (
        queue.call("r1", "s", "Expert 1", **where),
        queue.call("r1", "s", "Expert 2", **where),
        queue.call("r2", "s", "Clinician", **where),
        queue.call("r3", "s", "Clinician", **where),
    ):
        [first, second] = queue.standing("r1")
        assert (first.state, second.state) == ("reading", "reading") and first.others == 2
        [r2] = queue.standing("r2")
        assert (r2.state, r2.runs_ahead, r2.calls_ahead) == ("waiting", 1, 2)
        assert r2.line() == "waiting: 1 run ahead on the embedded model"
        assert queue.standing("r3")[0].line() == "waiting: 2 runs ahead on the embedded model"
    assert queue.standing("r1") == [] and queue.standing("r3") == []


def test_an_endpoint_whose_slots_are_unknown_never_says_a_call_waits():
    queue = CallQueue()
    with (
        queue.call("r1", "s", "a", backend="e", where="the LLM endpoint", slots=None),
        queue.call("r2", "s", "a", backend="e", where="the LLM endpoint", slots=None),
    ):
        assert queue.standing("r2")[0].line() == "reading the prompt (1 other run on the LLM endpoint too)"


def test_runs_register_their_calls_and_one_beyond_the_slots_waits_for_the_first(monkeypatch):
    monkeypatch.setattr("core.engine.methods.contract.slots_of", lambda llm: 1)  # a backend with one slot
    from core.engine.call_queue import QUEUE

    gate = Gate()  # the first call is held while it reads the prompt, then again after its first words
    llm = ScriptedLLM(gate=gate, held_at=(0, 1)).on("Think step by step", {"reasoning": "Insulin.", "answer": "A"})
    ids: list[str] = []
    threads = []
    for i in range(2):
        thread = threading.Thread(
            target=execute, args=("cot", MC), kwargs={"llm": llm, "ctx_hook": lambda ctx: ids.append(ctx.run.id)}
        )
        thread.start()
        threads.append(thread)
        if i == 0:  # the second call is sent after the first
            wait_until(lambda: gate.held, "the first run's call")
    wait_until(lambda: len(ids) == 2 and QUEUE.standing(ids[1]), "the second run's call in the queue")
    states = {i: [c.line() for c in QUEUE.standing(i)] for i in ids}
    assert states[ids[0]] == ["reading the prompt (1 other run on the LLM endpoint at http://scripted.invalid/v1 too)"]
    assert states[ids[1]] == ["waiting: 1 run ahead on the LLM endpoint at http://scripted.invalid/v1"]
    gate.let(1)
    wait_until(lambda: [c.state for c in QUEUE.standing(ids[0])] == ["writing"], "the first call's first words")
    assert QUEUE.standing(ids[0])[0].line().startswith("writing")
    gate.open()
    for thread in threads:
        thread.join(patience())
    assert QUEUE.standing(ids[0]) == [] and QUEUE.standing(ids[1]) == []


@pytest.mark.parametrize("reply", ["not JSON at all", RuntimeError("the server went away")])
def test_a_call_that_fails_leaves_the_queue(reply):
    from core.engine.call_queue import QUEUE

    def answer(messages):
        if isinstance(reply, Exception):
            raise reply
        return reply

    llm = ScriptedLLM().on("Think step by step", answer)
    run = execute("cot", MC, llm=llm)
    assert run.status == "error" and QUEUE.standing(run.id) == []
