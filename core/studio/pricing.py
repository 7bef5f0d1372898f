"""What runs cost in money, where a user pays a provider for tokens.

A price is what the user entered for a model (per million input and per million output tokens, in one currency);
the studio ships none. A run's cost is its price applied to the tokens the provider billed: the prompt and
completion tokens of the calls it answered. Calls answered from the response cache cost nothing, a run on the
embedded model costs nothing, and a run on a model with no price has no money figure at all (never a 0 that
would read as a real one). Prices are keyed by the model name a run records (``Run.model``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.engine.llm.embedded import MODEL_NAME as EMBEDDED_MODEL
from core.engine.store import RunStore
from core.engine.store.prices import call_usages, delete_price, price_rows, put_price
from core.engine.trace import Event, Run, Usage

PER = 1_000_000  # prices are per million tokens, as providers list them
MAX_PRICE = 10_000.0  # per million tokens: far above any listed model, low enough to catch a misplaced decimal
CURRENCIES = ("USD", "EUR", "GBP", "CHF", "JPY", "CNY", "CAD", "AUD", "INR")
SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}
FREE_LOCAL = "free (local)"
NO_PRICE = "no price"


class Price(BaseModel):
    """What one model costs the user, per million tokens read (input) and written (output)."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(min_length=1, max_length=200)
    input_per_m: float = Field(ge=0, le=MAX_PRICE, allow_inf_nan=False)
    output_per_m: float = Field(ge=0, le=MAX_PRICE, allow_inf_nan=False)
    currency: str = Field("USD", pattern=r"^[A-Z]{3}$")

    @field_validator("model", mode="before")
    @classmethod
    def _strip(cls, value: object) -> object:
        return value.strip() if isinstance(value, str) else value

    @property
    def rates(self) -> str:
        """``$2.50/$10.00 per M``: input then output, per million tokens."""
        return f"{rate(self.input_per_m, self.currency)}/{rate(self.output_per_m, self.currency)} per M"


@dataclass(frozen=True)
class Billed:
    """The tokens a provider billed: of the calls it answered, not those answered from the response cache."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0  # answered from the response cache: not billed

    def __add__(self, other: Billed) -> Billed:
        return Billed(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.calls + other.calls,
            self.cached_calls + other.cached_calls,
        )


def billed_usage(usage: Usage) -> Billed:
    """One step's usage as billed (the one rule, used for a run in hand and for many runs read from the store)."""
    if not usage.calls:
        return Billed()
    if usage.cached:
        return Billed(cached_calls=usage.calls)
    return Billed(usage.prompt_tokens, usage.completion_tokens, usage.calls)


def billed(events: Iterable[Event]) -> Billed:
    return sum((billed_usage(e.usage) for e in events), Billed())


def billed_by_run(store: RunStore, run_ids: Iterable[str]) -> dict[str, Billed]:
    """What the provider billed for each of these runs (a run with no LLM call, or not saved, is absent)."""
    found: dict[str, Billed] = {}
    for run_id, usage in call_usages(store, run_ids):
        found[run_id] = found.get(run_id, Billed()) + billed_usage(Usage(**json.loads(usage)))
    return found


@dataclass(frozen=True)
class Cost:
    """A run's (or a benchmark question's) cost: priced, free (the embedded model), or unknown (no price)."""

    model: str
    billed: Billed
    price: Price | None = None

    @property
    def state(self) -> Literal["priced", "free", "unpriced"]:
        if self.model == EMBEDDED_MODEL:
            return "free"
        return "unpriced" if self.price is None else "priced"

    @property
    def amount(self) -> float | None:
        """Money spent; 0 for the embedded model; None when the model has no price."""
        if self.state == "free":
            return 0.0
        if self.price is None:
            return None
        return (
            self.billed.prompt_tokens * self.price.input_per_m + self.billed.completion_tokens * self.price.output_per_m
        ) / PER

    @property
    def currency(self) -> str | None:
        return self.price.currency if self.price is not None and self.state == "priced" else None

    def short(self) -> str:
        """``$0.0123``, ``free (local)`` or ``no price``: for a table cell."""
        if self.state == "free":
            return FREE_LOCAL
        if self.price is None:
            return NO_PRICE
        return money(self.amount or 0.0, self.price.currency)

    def basis(self) -> str:
        """The figure with what it was computed from: ``$0.0123 · 12,345 in / 2,345 out at $2.50/$10.00 per M``,
        and the calls the cache answered for free, if any."""
        b = self.billed
        cached = (
            (
                f" · {b.cached_calls} call{'s' if b.cached_calls != 1 else ''} answered from the response cache, "
                "not billed"
            )
            if b.cached_calls
            else ""
        )
        if self.state == "free":
            return f"{FREE_LOCAL}: the embedded model runs on this machine"
        if self.price is None:
            return f"no price set for {self.model or 'this model'}"
        return f"{self.short()} · {b.prompt_tokens:,} in / {b.completion_tokens:,} out at {self.price.rates}{cached}"


def cost_of(model: str, spent: Billed, prices: Mapping[str, Price]) -> Cost:
    return Cost(model=model, billed=spent, price=prices.get(model))


def run_cost(run: Run, prices: Mapping[str, Price]) -> Cost:
    return cost_of(run.model, billed(run.events), prices)


# -- the price list --------------------------------------------------------------------------------------------------


def prices(store: RunStore) -> dict[str, Price]:
    """Model name -> its price, as the user entered them."""
    return {row["model"]: Price.model_validate(row) for row in price_rows(store)}


def save_price(store: RunStore, price: Price) -> None:
    if price.model == EMBEDDED_MODEL:
        raise ValueError(f"{EMBEDDED_MODEL} is the embedded model: it runs on this machine and costs nothing")
    put_price(store, price.model, price.input_per_m, price.output_per_m, price.currency)


def remove_price(store: RunStore, model: str) -> bool:
    return delete_price(store, model)


# -- figures as text -------------------------------------------------------------------------------------------------


def _symbol(amount: str, currency: str) -> str:
    return f"{SYMBOLS[currency]}{amount}" if currency in SYMBOLS else f"{currency} {amount}"


def money(amount: float, currency: str) -> str:
    """Three significant digits, and at least cents: ``$0.0123``, ``$1.23``, ``$1,234.57``, ``€0.000420``."""
    places = 2 if amount <= 0 else max(2, 2 - math.floor(math.log10(amount)))
    return _symbol(f"{amount:,.{places}f}", currency)


def rate(per_m: float, currency: str) -> str:
    """A price as entered (to six decimals), with at least cents: ``$2.50``, ``$0.075``."""
    text = f"{per_m:,.6f}".rstrip("0")
    whole, _, cents = text.partition(".")
    return _symbol(f"{whole}.{cents.ljust(2, '0')}", currency)
