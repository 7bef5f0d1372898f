"""The embedded model's measured speed, per method: seconds a question takes on the shipped server, and the same
questions on the naive one (one slot, no prompt cache, calls in sequence). ``benchmarks/llm_bench.py`` measures it and
writes ``data/measured_speed.json`` (``MeasuredSpeed``); the studio reads it from there (the Settings page's table, a
benchmark's estimate of the time left before its first question ends), never the script's own results.

Beside it, ``WRITING``: how fast the model writes now, measured as the studio's own calls stream, so an estimate made
from the measured figures can follow a machine that is slower (or busier) today."""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ValidationError

from core.engine.paths import REPO_ROOT

SPEED_FILE = REPO_ROOT / "data" / "measured_speed.json"


class ConfigSpeed(BaseModel):
    """One server configuration's means per question."""

    seconds: float
    prompt_evaluated: float  # prompt tokens the server read (those it found cached not counted)
    generated_per_s: float | None  # llama.cpp's own writing rate; None where no run reported one


class MethodSpeed(BaseModel):
    median_seconds: float | None  # the shipped server's, per question, over the runs that ended well
    naive: ConfigSpeed | None = None
    shipped: ConfigSpeed | None = None
    ratio: list[float] = []  # shipped / naive seconds, per question both ran
    ratio_equal_work: list[float] = []  # shipped seconds / the naive rates applied to the shipped run's tokens


class MeasuredSpeed(BaseModel):
    model: str
    measured_to: str  # when the latest run ended
    methods: dict[str, MethodSpeed]


@lru_cache(maxsize=1)
def measured(path: Path = SPEED_FILE) -> MeasuredSpeed | None:
    """The figures as last measured; None when the file is missing or not of this shape."""
    try:
        return MeasuredSpeed.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None


WINDOW_SECONDS = 10.0  # "now": the tokens written in the last this many seconds
RECENT_CALLS = 8  # "the model's current writing speed": its last this many calls that wrote
KEPT_TICKS = 4096  # tokens remembered per backend, enough for the window at any speed a laptop reaches


class WritingMeter:
    """How fast the model writes, as this process sees it, per backend: every token (a streamed chunk, the studio's
    one rule) of every call that reached a model, and each finished call's own rate. Replies from the cache are not
    written, so they count for nothing here. Thread-safe: calls of every run report to it."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._ticks: dict[str, deque[float]] = defaultdict(lambda: deque(maxlen=KEPT_TICKS))
        self._calls: dict[str, deque[tuple[int, float]]] = defaultdict(lambda: deque(maxlen=RECENT_CALLS))

    def tick(self, backend: str) -> None:
        """One token written now."""
        with self._lock:
            self._ticks[backend].append(self._clock())

    def call(self, backend: str, tokens: int, seconds: float) -> None:
        """A call that wrote ``tokens`` tokens in ``seconds`` from its first to its last (its reading not counted)."""
        if tokens > 0 and seconds > 0:
            with self._lock:
                self._calls[backend].append((tokens, seconds))

    def now(self, backend: str) -> float | None:
        """Tokens per second, all its calls together, over the last ``WINDOW_SECONDS``; None when it wrote fewer than
        two then (it waits, or reads a prompt: one token is no rate)."""
        with self._lock:
            now = self._clock()
            recent = [t for t in self._ticks[backend] if now - t <= WINDOW_SECONDS]
        if len(recent) < 2:
            return None
        return len(recent) / max(now - recent[0], 1.0)

    def recent(self, backend: str) -> float | None:
        """Tokens per second one call writes, over its last ``RECENT_CALLS`` calls; None before any."""
        with self._lock:
            calls = list(self._calls[backend])
        seconds = sum(s for _, s in calls)
        return sum(t for t, _ in calls) / seconds if seconds else None


WRITING = WritingMeter()  # the process's one meter: every LLM reports to it, every page reads it
