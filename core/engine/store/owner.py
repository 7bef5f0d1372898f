"""Which process runs a run, and whether that process is gone (so its run is not running any more)."""

from __future__ import annotations

import os
import socket
from functools import lru_cache
from typing import Any

import psutil

# Start times are compared with this slack: the same process reports the same value, a reused pid a later one.
SAME_START_SECONDS = 1.0


@lru_cache(maxsize=1)
def _this_process() -> tuple[str, int, float]:
    return socket.gethostname(), os.getpid(), psutil.Process().create_time()


def current() -> dict[str, Any]:
    """The owner columns of a run started by this process."""
    if _this_process()[1] != os.getpid():  # a forked child is another process
        _this_process.cache_clear()
    host, pid, started = _this_process()
    return {"owner_host": host, "owner_pid": pid, "owner_started": started}


def is_gone(host: str | None, pid: int | None, started: float | None) -> bool:
    """True only when the owner surely no longer runs: it ran on this machine, and no process with its pid and
    start time exists. A run owned by another machine, or by a process this one may not inspect, is left alone."""
    if host is None or pid is None or started is None or host != socket.gethostname():
        return False
    try:
        process = psutil.Process(pid)
        return abs(process.create_time() - started) > SAME_START_SECONDS or process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True
    except psutil.Error:  # access denied: it exists
        return False
