"""Ctrl-C and SIGTERM on the command line while runs are in flight: they stop cleanly (status ``cancelled``,
an event saying so, the trace kept, results written) instead of dying with a traceback."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}  # 128 + the signal's number, as shells report it


class Stop:
    """Set by the first signal; a third Ctrl-C quits at once (the store marks those runs interrupted later)."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signum: int | None = None
        self.count = 0

    @property
    def exit_code(self) -> int:
        return EXIT_CODES.get(self.signum, 130)


@contextmanager
def stopping_on_signals(what: str) -> Iterator[Stop]:
    """Within the block, SIGINT and SIGTERM set ``stop.event`` (give it to the runs as their cancel event)."""
    stop = Stop()

    def handle(signum: int, _frame) -> None:
        stop.count += 1
        if stop.count == 1:
            stop.signum = signum
            stop.event.set()
            _say(
                f"{signal.Signals(signum).name}: stopping {what}; each ends within seconds and keeps its trace "
                "(Ctrl-C twice more to quit at once)"
            )
        elif stop.count == 2:
            _say("still stopping…")
        else:
            raise KeyboardInterrupt

    previous = {signum: signal.signal(signum, handle) for signum in EXIT_CODES}
    try:
        yield stop
    finally:
        for signum, handler in previous.items():
            # once stopping, the command only reports and writes what finished: more signals would only cut that
            signal.signal(signum, signal.SIG_IGN if stop.event.is_set() else handler)


def _say(text: str) -> None:
    print(f"\n{text}", file=sys.stderr, flush=True)
