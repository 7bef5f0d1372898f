"""Turns: the guarded work runs one thread at a time, in the order the threads asked, and a stuck holder is not
waited for beyond the limit."""

from __future__ import annotations

import threading
import time

from core import turns
from core.turns import Turns


def test_threads_take_turns_one_at_a_time_in_the_order_they_asked():
    gate, order, inside = Turns(), [], []
    first_in, release = threading.Event(), threading.Event()

    def work(i: int) -> None:
        with gate.turn():
            inside.append(i)
            assert len(inside) == 1, inside  # nobody else is in
            if i == 0:
                first_in.set()
                release.wait(5)
            order.append(i)
            inside.remove(i)

    threads = [threading.Thread(target=work, args=(0,))]
    threads[0].start()
    first_in.wait(5)
    for i in range(1, 8):  # they ask one after another while the first holds its turn
        threads.append(threading.Thread(target=work, args=(i,)))
        threads[-1].start()
        time.sleep(0.02)
    release.set()
    for thread in threads:
        thread.join(5)
    assert order == list(range(8))


def test_a_turn_that_never_comes_is_not_waited_for_beyond_the_limit(monkeypatch):
    monkeypatch.setattr(turns, "WAIT_AT_MOST", 0.2)
    gate = Turns()
    holder = gate.turn()
    holder.__enter__()  # a turn taken and never given back
    began = time.perf_counter()
    with gate.turn():
        waited = time.perf_counter() - began
    assert 0.15 < waited < 2
    holder.__exit__(None, None, None)
