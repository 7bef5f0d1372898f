"""Money per question for each arm × dataset of a benchmark: the mean of its questions' costs (``core.studio.pricing``)
with a 95% t-interval, or why there is none (a model with no price, several currencies)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from scipy.stats import t as student_t

from core.studio.eval.report import ALL
from core.studio.eval.results import ItemResult
from core.studio.eval.stats import LEVEL
from core.studio.pricing import Billed, Cost, Price, cost_of

State = Literal["priced", "free", "unpriced", "currencies"]


@dataclass(frozen=True)
class ArmMoney:
    arm: str
    dataset: str
    state: State  # free: every question ran on the embedded model; currencies: priced in more than one
    n: int
    currency: str | None = None
    mean: float | None = None
    low: float | None = None  # the 95% t-interval of the mean; None under two questions
    high: float | None = None
    calls: int = 0  # billed calls
    cached_calls: int = 0  # answered from the response cache, not billed
    unpriced: tuple[str, ...] = ()  # the models with no price

    def as_fields(self) -> dict[str, Any]:
        """The line's figures as a summary line names costs (``mean_<cost>``, with ``_low``/``_high``)."""
        return {"mean_money": self.mean, "mean_money_low": self.low, "mean_money_high": self.high}


def mean_interval(values: list[float]) -> tuple[float, float | None, float | None]:
    """The mean and its 95% Student-t interval (None for fewer than two values)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, None, None
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(student_t.ppf(0.5 + LEVEL / 2, n - 1)) * sd / math.sqrt(n)
    return mean, max(mean - half, 0.0), mean + half


def question_cost(row: ItemResult, billed: Mapping[str, Billed], prices: Mapping[str, Price]) -> Cost:
    """One benchmark question's cost, from its run's calls; a run deleted since is counted from the totals the
    result kept (which cannot tell cached calls apart, so they count as billed)."""
    spent = billed.get(row.run_id)
    if spent is None:
        spent = Billed(row.prompt_tokens, row.completion_tokens, row.calls)
    return cost_of(row.model, spent, prices)


def money_lines(
    summary: list[dict[str, Any]], rows: list[ItemResult], billed: Mapping[str, Billed], prices: Mapping[str, Price]
) -> list[ArmMoney]:
    """One line per summary line (arm × dataset, and ``all``), in its order."""
    costs = [(row, question_cost(row, billed, prices)) for row in rows]
    lines = []
    for s in summary:
        mine = [c for row, c in costs if row.arm == s["arm"] and s["dataset"] in (ALL, row.dataset)]
        lines.append(_line(s["arm"], s["dataset"], mine))
    return lines


def _line(arm: str, dataset: str, costs: list[Cost]) -> ArmMoney:
    calls = sum(c.billed.calls for c in costs)
    cached = sum(c.billed.cached_calls for c in costs)
    base = dict(arm=arm, dataset=dataset, n=len(costs), calls=calls, cached_calls=cached)
    unpriced = tuple(sorted({c.model for c in costs if c.state == "unpriced"}))
    if unpriced:
        return ArmMoney(state="unpriced", unpriced=unpriced, **base)
    currencies = {c.currency for c in costs if c.currency}
    if len(currencies) > 1:
        return ArmMoney(state="currencies", **base)
    mean, low, high = mean_interval([c.amount or 0.0 for c in costs])
    state: State = "priced" if currencies else "free"
    return ArmMoney(state=state, currency=next(iter(currencies), None), mean=mean, low=low, high=high, **base)
