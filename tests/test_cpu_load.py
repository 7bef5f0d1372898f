"""Whether other programs use the CPU, from two readings of every process's CPU seconds (injected here)."""

from __future__ import annotations

import pytest

from core.engine.cpu_load import CpuWatch, Load, compare, read_processes

ME = 100


def reading(**cpu: float) -> dict[int, tuple[str, float]]:
    """``p<pid>=seconds``: a process's CPU seconds so far."""
    return {int(name[1:]): (name, seconds) for name, seconds in cpu.items()}


def test_others_are_programs_that_kept_a_tenth_of_a_core_busy_and_the_studio_is_not_one():
    before = reading(p100=10.0, p1=5.0, p2=5.0, p3=5.0, p4=1.0)
    after = reading(p100=14.0, p1=7.0, p2=6.0, p3=5.1, p4=1.0, p5=50.0)  # p5 started meanwhile: not counted
    load = compare(before, after, seconds=2.0, cores=2, mine={ME})
    assert load.others == ["p1", "p2"]  # p3 used 0.1 s of 2 s: 5 % of a core; p100 is the studio
    assert load.share == pytest.approx(3.1 / 4.0) and load.busy
    assert load.said() == "the computer is busy (2 other programs use the CPU)"
    assert Load(["p1"], 0.5).said() == "the computer is busy (1 other program uses the CPU)"


def test_an_idle_computer_is_not_busy_and_the_studios_own_work_never_makes_it_so():
    before, after = reading(p100=10.0, p1=5.0), reading(p100=13.9, p1=5.05)
    assert not compare(before, after, seconds=2.0, cores=2, mine={ME}).busy
    little = compare(reading(p1=0.0, p2=0.0), reading(p1=0.3, p2=0.3), seconds=2.0, cores=4, mine={ME})
    assert little.others == ["p1", "p2"] and not little.busy  # two programs at 15 % of a core on four cores


def test_the_watch_reads_at_most_every_two_seconds_and_compares_with_the_reading_before():
    now = [0.0]
    readings = iter([reading(p1=0.0), reading(p1=1.8), reading(p1=1.9)])
    reads = []

    def read():
        reads.append(now[0])
        return next(readings)

    watch = CpuWatch(read=read, clock=lambda: now[0], cores=2, mine=lambda: {ME})
    assert watch.now() is None  # one reading: nothing to compare yet
    now[0] = 1.0
    assert watch.now() is None and reads == [0.0]  # too soon to read again
    now[0] = 2.0
    assert watch.now().busy  # 1.8 s of 2 s on two cores: 45 %
    now[0] = 3.0
    assert watch.now().busy and reads == [0.0, 2.0]  # the last load, not a new reading
    now[0] = 4.0
    assert not watch.now().busy and reads == [0.0, 2.0, 4.0]


def test_the_real_reading_sees_this_process():
    import os

    assert os.getpid() in read_processes()
