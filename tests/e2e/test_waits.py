"""The browser tests' wait policy: one table, one setting, and a timeout that names what was waited for."""

from __future__ import annotations

import pytest

from tests.e2e.waits import BASE, ms, until


def test_every_wait_scales_with_one_setting(monkeypatch):
    monkeypatch.setenv("MEDRAG_TEST_WAIT_SCALE", "2.5")
    assert {name: ms(name) for name in BASE} == {name: int(wait * 2.5) for name, wait in BASE.items()}
    monkeypatch.setenv("MEDRAG_TEST_WAIT_SCALE", "0")
    with pytest.raises(ValueError, match="MEDRAG_TEST_WAIT_SCALE"):
        ms("redraw")


def test_a_wait_that_runs_out_says_what_it_waited_for(monkeypatch):
    monkeypatch.setenv("MEDRAG_TEST_WAIT_SCALE", "0.05")  # a glance of 0.1 s
    with pytest.raises(AssertionError, match=r"waited 0.1 s \('glance' × 0.05\) for the door to open"):
        until(lambda: False, "the door to open", "glance")
    answers = iter([0, "", "open"])
    assert until(lambda: next(answers), "the door to open", "glance") == "open"


def test_the_default_scale_follows_the_cores_the_tests_may_use(monkeypatch):
    monkeypatch.delenv("MEDRAG_TEST_WAIT_SCALE", raising=False)
    monkeypatch.setattr("core.engine.settings.usable_cores", lambda: 1)
    assert ms("redraw") == 2 * BASE["redraw"]
    monkeypatch.setattr("core.engine.settings.usable_cores", lambda: 4)
    assert ms("redraw") == BASE["redraw"]
