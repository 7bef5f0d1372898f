"""Whether other programs are using the computer's processors, so a screen can say why a run goes slower than its
estimate: "the computer is busy (3 other programs use the CPU)".

Two readings of every process's CPU seconds (``psutil``, which reads ``/proc`` on Linux) some seconds apart give
what each used meanwhile; this process and its children (the embedded model runs inside it) are not "other". One
reading of all processes costs a few milliseconds; ``CpuWatch`` takes at most one every ``SAMPLE_SECONDS`` however
many pages ask, and compares it with the one before.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import psutil

from core.engine.settings import usable_cores

SAMPLE_SECONDS = 2.0  # the shortest time between two readings
MEANINGFUL = 0.10  # a program uses the CPU when it kept a tenth of one core busy between two readings
BUSY_SHARE = 0.25  # the computer is busy when other programs used a quarter of all its cores or more

Reading = dict[int, tuple[str, float]]  # pid -> (its name, CPU seconds it has used so far)


@dataclass(frozen=True)
class Load:
    others: list[str]  # the other programs that used the CPU meaningfully, busiest first
    share: float  # of all the cores, what other programs used (0 to 1)

    @property
    def busy(self) -> bool:
        return self.share >= BUSY_SHARE and bool(self.others)

    def said(self) -> str:
        n = len(self.others)
        return f"the computer is busy ({n} other program{'' if n == 1 else 's'} use{'s' if n == 1 else ''} the CPU)"


def read_processes() -> Reading:
    """Every process's CPU seconds so far (user and system); one that ends or hides while read is left out."""
    found: Reading = {}
    for process in psutil.process_iter(["name", "cpu_times"]):
        times = process.info.get("cpu_times")
        if times is not None:
            found[process.pid] = (process.info.get("name") or str(process.pid), times.user + times.system)
    return found


def own_processes() -> set[int]:
    """This process and its children: their CPU is the studio's own work, not another program's."""
    me = psutil.Process()
    try:
        return {me.pid, *(child.pid for child in me.children(recursive=True))}
    except psutil.Error:
        return {me.pid}


def compare(before: Reading, after: Reading, seconds: float, cores: int, mine: set[int]) -> Load:
    """What other processes used between two readings ``seconds`` apart (processes in only one reading: none)."""
    used = {
        pid: (name, max(cpu - before[pid][1], 0.0))
        for pid, (name, cpu) in after.items()
        if pid in before and pid not in mine
    }
    busiest = sorted(used.values(), key=lambda named: -named[1])
    others = [name for name, cpu in busiest if cpu >= MEANINGFUL * seconds]
    return Load(others, sum(cpu for _, cpu in busiest) / (seconds * cores) if seconds > 0 else 0.0)


class CpuWatch:
    """The load as last measured: ``now()`` reads the processes again when the last reading is older than
    ``SAMPLE_SECONDS`` and compares the two; None until two readings exist."""

    def __init__(
        self,
        read: Callable[[], Reading] = read_processes,
        clock: Callable[[], float] = time.monotonic,
        cores: int | None = None,
        mine: Callable[[], set[int]] = own_processes,
    ):
        self._read, self._clock, self._mine = read, clock, mine
        self._cores = cores or usable_cores()
        self._lock = threading.Lock()
        self._last: tuple[float, Reading] | None = None
        self._load: Load | None = None

    def now(self) -> Load | None:
        with self._lock:
            at = self._clock()
            if self._last is None or at - self._last[0] >= SAMPLE_SECONDS:
                reading = self._read()
                if self._last is not None:
                    self._load = compare(self._last[1], reading, at - self._last[0], self._cores, self._mine())
                self._last = (at, reading)
            return self._load


CPU = CpuWatch()  # the process's one watch: every page asks it
