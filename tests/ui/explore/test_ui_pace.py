"""How long a run will take, on the Ask page: the estimate before Run, the pace and time left while it goes, and
the notice that the computer is busy (the load injected: what other programs do is not the test's to arrange)."""

from __future__ import annotations

import pytest

from core.engine.cpu_load import Load
from core.engine.store import RunStore
from tests.fakes import ScriptedLLM, until_runs_end
from tests.ui.explore.test_ui_ask import ask_page, click_run, fill
from tests.waiting import Gate, wait_until
from ui.common.jobs import live

REPLY = {"reasoning": "Insulin lowers blood glucose.", "answer": "A"}


class Watch:
    def __init__(self, load: Load | None):
        self.load = load

    def now(self) -> Load | None:
        return self.load


@pytest.fixture
def cpu(monkeypatch) -> Watch:
    watch = Watch(None)
    monkeypatch.setattr("ui.runs.pace.CPU", watch)
    return watch


def captions(at) -> str:
    return "\n".join(c.value for c in at.caption)


def test_the_estimate_before_run_comes_from_the_runs_here_and_the_busy_notice_only_when_busy(cpu):
    llm = ScriptedLLM(delay=0.3).on("Think step by step", REPLY)
    at = fill(ask_page(llm), "Which hormone lowers blood glucose?", ["Insulin", "Glucagon"])
    assert "CoT: no estimate yet on this model; its first run here gives one." in captions(at)
    assert not at.warning
    made = RunStore().load_run(click_run(at).query_params["run"])
    at = at.button(key="ask.new").click().run()
    seconds = round(made.totals.seconds)
    assert f"CoT: expect about **{seconds} s** on this computer ({seconds} s the median of its runs here" in captions(
        at
    )
    cpu.load = Load(["python", "chromium", "make"], 0.8)
    at = at.run()
    assert [w.value for w in at.warning] == [
        "The computer is busy (3 other programs use the CPU): runs here go slower than estimated while it lasts."
    ]
    cpu.load = Load(["python"], 0.05)  # one program, a little: not busy
    assert not at.run().warning


def test_while_it_runs_the_box_says_tokens_per_second_now_and_the_time_left(cpu):
    gate = Gate()
    llm = ScriptedLLM(gate=gate, held_at=(2,)).on("Think step by step", REPLY)  # two tokens, then held
    at = fill(ask_page(llm), "Which hormone lowers blood glucose?", ["Insulin", "Glucagon"])
    gate.open()
    click_run(at)  # one run recorded: the next one has an estimate
    gate.shut()
    at = at.button(key="ask.again").click().run()
    cpu.load = Load(["python", "make"], 0.6)
    at = at.button(key="ask.go").click().run()
    wait_until(lambda: gate.held, "the reply held after its first two words")
    at = at.run()
    box = next(s for s in at.status if s.label.startswith("CoT"))
    said = "\n".join(c.value for c in box.caption)
    assert "tokens/s now" in said and ("left of the" in said or "past the" in said)
    assert any("The computer is busy (2 other programs use the CPU)" in w.value for w in at.warning)
    gate.open()
    until_runs_end(at)
    assert live(at.query_params["run"]).done
