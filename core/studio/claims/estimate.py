"""What a check will cost before it runs: tokens, seconds and money per question of each arm, from what the method
cost before (the store's latest runs of it on this model; else its runs on any model for the tokens and the embedded
model's measured speed for the seconds), at the price Settings has for the model."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass

from core.engine.estimate import RECORDED_RUNS, recorded_seconds
from core.engine.llm.embedded import MODEL_NAME
from core.engine.store import RunStore
from core.studio.eval.presets import PRESETS
from core.studio.pricing import Billed, Price, cost_of
from core.studio.workshop.pack import load_pack


def arm_method(arm: str) -> str:
    return PRESETS[arm].method if arm in PRESETS else arm


def duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


@dataclass(frozen=True)
class ArmCost:
    arm: str
    seconds: float | None  # per question, one after another
    prompt_tokens: float | None
    completion_tokens: float | None
    basis: str  # where the figures come from

    @property
    def tokens(self) -> float | None:
        if self.prompt_tokens is None or self.completion_tokens is None:
            return None
        return self.prompt_tokens + self.completion_tokens


def _totals(runs: list[dict]) -> tuple[float, float]:
    return (
        statistics.median(r.get("prompt_tokens", 0) for r in runs),
        statistics.median(r.get("completion_tokens", 0) for r in runs),
    )


def pack_totals(method: str) -> list[dict]:
    """The totals of the workshop pack's recorded runs of ``method`` (the teaching cases, on the embedded model)."""
    return [
        c.runs[method].run.totals.model_dump()
        for c in load_pack()[0]
        if method in c.runs and c.runs[method].run.status == "ok"
    ]


def arm_cost(store: RunStore, arm: str, model: str) -> ArmCost:
    """The store's latest runs of the arm's method on this model; else its runs on other models (for the tokens);
    else the workshop pack's recorded runs. Seconds: this model's runs, else the embedded model's measured speed,
    else the pack's."""
    method = arm_method(arm)
    runs = [r for r in store.list_runs(limit=RECORDED_RUNS * 4, method=method) if r["status"] == "ok"]
    mine = [r["totals"] for r in runs if r["model"] == model][:RECORDED_RUNS]
    others = [r["totals"] for r in runs][:RECORDED_RUNS]
    of = method if arm == method else f"{method} (the preset's method)"
    seconds = recorded_seconds(store, method, model)
    if mine:
        return ArmCost(arm, seconds, *_totals(mine), basis=f"median of {len(mine)} runs of {of} on this model here")
    if others:
        return ArmCost(
            arm, seconds, *_totals(others), basis=f"tokens: median of {len(others)} runs of {of} on other models here"
        )
    pack = pack_totals(method)
    if not pack:
        return ArmCost(arm, seconds, None, None, basis=f"no run of {of} recorded")
    if seconds is None and model == MODEL_NAME:
        seconds = statistics.median(t["seconds"] for t in pack)
    return ArmCost(
        arm,
        seconds,
        *_totals(pack),
        basis=f"tokens: median of {of}'s {len(pack)} recorded teaching-case runs on the embedded model"
        + ("" if model == MODEL_NAME else ", at its compact lengths: an endpoint writes the paper's, so more"),
    )


@dataclass(frozen=True)
class Estimate:
    n: int
    arms: list[ArmCost]
    model: str
    price: Price | None

    @property
    def seconds(self) -> float | None:
        each = [a.seconds for a in self.arms]
        return None if None in each else self.n * sum(each)

    @property
    def tokens(self) -> float | None:
        each = [a.tokens for a in self.arms]
        return None if None in each else self.n * sum(each)

    def money(self) -> str:
        """The money the tokens would cost at the model's price: "free (local)", "no price" or the amount."""
        if any(a.tokens is None for a in self.arms):
            return (
                "unknown (no recorded tokens)"
                if self.model != MODEL_NAME
                else cost_of(self.model, Billed(), {}).short()
            )
        billed = Billed(
            round(self.n * sum(a.prompt_tokens for a in self.arms)),
            round(self.n * sum(a.completion_tokens for a in self.arms)),
        )
        return cost_of(self.model, billed, {self.model: self.price} if self.price else {}).short()

    def lines(self) -> list[str]:
        out = [
            f"{a.arm}: "
            + (f"{a.seconds:.0f} s" if a.seconds is not None else "? s")
            + " and "
            + (f"{a.tokens:,.0f} tokens" if a.tokens is not None else "? tokens")
            + f" a question ({a.basis})"
            for a in self.arms
        ]
        seconds = (
            f"about {duration(self.seconds)}"
            if self.seconds is not None
            else "time unknown (no run recorded on this model)"
        )
        tokens = f"{self.tokens:,.0f}" if self.tokens is not None else "unknown"
        out.append(
            f"{self.n:,} questions x {len(self.arms)} arms, one after another: {seconds}, {tokens} tokens, "
            f"money: {self.money()}"
        )
        return out


def estimate(store: RunStore, arms: tuple[str, ...], model: str, n: int, prices: Mapping[str, Price]) -> Estimate:
    return Estimate(n, [arm_cost(store, arm, model) for arm in arms], model, prices.get(model))
