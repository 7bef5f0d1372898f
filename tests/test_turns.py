"""Turns: the guarded work runs one thread at a time, in the order the threads asked, and a stuck holder is not
waited for beyond the limit."""

from __future__ import annotations

import threading
import time

from core.studio import turns
from core.studio.turns import Turns
from tests.waiting import patience, wait_until


def test_threads_take_turns_one_at_a_time_in_the_order_they_asked():
    gate, order, inside = Turns(), [], []
    first_in, release = threading.Event(), threading.Event()

    def work(i: int) -> None:
        with gate.turn():
            inside.append(i)
            assert len(inside) == 1, inside  # nobody else is in
            if i == 0:
                first_in.set()
                release.wait(patience())
            order.append(i)
            inside.remove(i)

    threads = [threading.Thread(target=work, args=(0,))]
    threads[0].start()
    assert first_in.wait(patience())
    for i in range(1, 8):  # they ask one after another while the first holds its turn
        threads.append(threading.Thread(target=work, args=(i,)))
        threads[-1].start()
        # thread i has asked once it stands in the line (the holder first, then those waiting)
        wait_until(lambda: len(gate._waiting) == i + 1, f"thread {i} to ask for its turn")
    release.set()
    for thread in threads:
        thread.join(patience())
    assert order == list(range(8))


def test_a_turn_that_never_comes_is_not_waited_for_beyond_the_limit(monkeypatch):
    monkeypatch.setattr(turns, "WAIT_AT_MOST", 0.2)
    gate = Turns()
    holder = gate.turn()
    holder.__enter__()  # a turn taken and never given back
    waited: list[float] = []

    def second() -> None:
        began = time.monotonic()
        with gate.turn():  # the holder never gives it back: only the limit lets this one in
            waited.append(time.monotonic() - began)

    threading.Thread(target=second, daemon=True).start()
    wait_until(lambda: waited, "the next thread's turn, past a holder that never gives it back")
    assert waited[0] > 0.15  # it did wait for the holder, about as long as the limit says
    holder.__exit__(None, None, None)
