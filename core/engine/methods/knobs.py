"""The knob fields methods share (a reply's token budget, the sampling seed, how much a reader reads) and how a
sampled call takes the run's seed."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from core.engine.llm.tokens import CHARS_PER_TOKEN


def budget_knob(what: str, compact: int, paper: int, *, least: int = 64, tail: str = "") -> Any:
    """A method's ``max_tokens`` knob: the tokens ``what`` may take; empty (the default) means the backend's lengths'
    (``compact`` on the embedded model, ``paper`` on an endpoint)."""
    return Field(
        None,
        ge=least,
        le=4096,
        description=f"budget for {what}; empty = the backend's ({compact:,} on the embedded model, {paper:,} on an "
        f"endpoint{tail})",
    )


def seed_knob(draws: str = "replies", each: str = "") -> Any:
    """A method's ``seed`` knob, where some of its agents sample: ``draws`` names what another seed draws anew,
    ``each`` what else has a seed of its own."""
    return Field(
        0,
        ge=0,
        description=f"sampling seed of the agents above temperature 0{each}: the same seed replays a saved run from "
        f"the response cache; another seed draws new {draws}",
    )


def reading_knob(reader: str) -> Any:
    """A method's ``max_doc_chars`` knob. The papers read as many snippets as their model's context holds, so
    empty (the default) means as many as the backend takes per call (``RunContext.reading_chars``)."""
    from core.engine.llm.embedded import SHIPPED

    laptop = SHIPPED.read_tokens * CHARS_PER_TOKEN
    return Field(
        None,
        ge=500,
        le=600000,
        description=f"most characters of documents {reader} reads; empty = as "
        f"many as the backend takes per call (its context window; {laptop:,} characters on the embedded model)",
    )


def sample_seed(temperature: float, seed: int, offset: int = 0) -> int | None:
    """The run's seed for a sampled call, so the response cache can replay it; none for a greedy call. Calls that
    share a prompt add their offset to the seed spaced by 1,000, so runs with neighbouring seeds share no sample."""
    return seed * 1000 + offset if temperature > 0 else None


def sampling(temperature: float, seed: int, offset: int = 0) -> dict[str, Any]:
    """A call's temperature, with the run's seed when it samples (``sample_seed``)."""
    return {"temperature": temperature, "seed": sample_seed(temperature, seed, offset)}
