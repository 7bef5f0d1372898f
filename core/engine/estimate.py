"""How long a method will take on this machine, said before it runs and kept up while it runs.

One rule for every screen (Ask, Compare, the workshop's what-if, a benchmark's time left): the seconds a question
took the method here, as measured by ``benchmarks/llm_bench.py`` for the embedded model (``speed.measured``) or as
the store's own runs of it on this model took, scaled by how fast the model writes now against how fast it wrote
then (``speed.WRITING``), so a machine slower or busier today gets a longer estimate before the run, not after it.
Runs served from the response cache took no model time and count for nothing.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from core.engine.llm.embedded import MODEL_NAME
from core.engine.llm.speed import WRITING, measured
from core.engine.store import RunStore

RECORDED_RUNS = 50  # the latest runs of a method that make its recorded pace
LONG_SECONDS = 60.0  # a run expected to take longer than this is "minutes": screens point to the recorded pack


@dataclass(frozen=True)
class Estimate:
    seconds: float  # the whole run, at the pace the model writes now
    base: float  # the seconds it took where it was measured
    source: str  # where ``base`` comes from, in words
    measured_rate: float | None  # tokens/s the model wrote where ``base`` was measured, when known
    rate_now: float | None  # tokens/s its recent calls wrote here, when any has

    @property
    def long(self) -> bool:
        return self.seconds > LONG_SECONDS

    @property
    def slower(self) -> float:
        """How many times slower the model writes now than when ``base`` was measured (1 when either is unknown)."""
        return self.measured_rate / self.rate_now if self.measured_rate and self.rate_now else 1.0

    def left(self, elapsed: float) -> float:
        """Seconds still to go after ``elapsed``; never below zero (a run past its estimate has none left to say)."""
        return max(self.seconds - elapsed, 0.0)


def recorded_seconds(store: RunStore, method: str, model: str) -> float | None:
    """The median seconds of the method's latest runs on this model that reached it (not served from the cache)."""
    rows = [
        r
        for r in store.list_runs(limit=RECORDED_RUNS * 4, method=method)
        if r["status"] == "ok" and r["model"] == model and r["totals"].get("seconds") and not r["totals"].get("cached")
    ][:RECORDED_RUNS]
    return statistics.median(r["totals"]["seconds"] for r in rows) if rows else None


def estimate(store: RunStore, method: str, model: str, backend: str) -> Estimate | None:
    """The method's expected seconds on ``model`` (served as ``backend``) now; None when nothing has measured it."""
    rate_now = WRITING.recent(backend)
    figures = measured() if model == MODEL_NAME else None
    speed = figures.methods.get(method) if figures else None
    if speed is not None and speed.median_seconds:
        rate = speed.shipped.generated_per_s if speed.shipped else None
        base, source = speed.median_seconds, f"measured on the embedded model ({figures.measured_to[:10]})"
    elif (base := recorded_seconds(store, method, model)) is not None:
        rate, source = None, "the median of its runs here"
    else:
        return None
    found = Estimate(base, base, source, rate, rate_now)
    return Estimate(base * found.slower, base, source, rate, rate_now)
