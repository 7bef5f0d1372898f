"""How many questions a paired check needs before it is run, and what a given number can see.

The test is McNemar's on the two arms' paired outcomes. statsmodels has no power function for it, so the sample size
is Connor's normal approximation (R. J. Connor, "Sample size for testing differences in proportions for the
paired-sample design", Biometrics 43:207-211, 1987):

    n = (z_{1-alpha/2} * sqrt(psi) + z_{power} * sqrt(psi - delta^2))^2 / delta^2

where delta is the difference in accuracy the paper reports (method minus baseline) and psi the share of questions
on which the two arms disagree (one right, the other wrong). A paper gives the two accuracies, never psi, so psi is
assumed: by default the share two arms that err independently would disagree on, p1(1-p2) + p2(1-p1). Two methods
on one model err on many of the same questions, so the real share is usually smaller and fewer questions suffice:
the default errs on the side of more questions. The check itself uses the exact McNemar test, which is a little
more conservative than this approximation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.optimize import brentq
from scipy.stats import norm

from core.studio.claims.model import Claim
from core.studio.eval.stats import ALPHA

POWER = 0.80


def independent_discordance(p1: float, p2: float) -> float:
    return p1 * (1 - p2) + p2 * (1 - p1)


def questions_needed(delta: float, psi: float, power: float = POWER, alpha: float = ALPHA) -> int | None:
    """Connor's n for a paired difference ``delta`` with discordance ``psi``; None when delta is 0 (no n will do)."""
    if delta == 0:
        return None
    if psi < abs(delta):
        raise ValueError(f"the discordant share ({psi:.3f}) cannot be below the difference ({abs(delta):.3f})")
    za, zb = norm.ppf(1 - alpha / 2), norm.ppf(power)
    return math.ceil((za * math.sqrt(psi) + zb * math.sqrt(psi - delta**2)) ** 2 / delta**2)


def power_at(n: int, delta: float, psi: float, alpha: float = ALPHA) -> float:
    """The chance that n questions show ``delta`` at ``alpha`` (the same approximation, solved for power)."""
    if n <= 0 or delta == 0:
        return alpha
    za = norm.ppf(1 - alpha / 2)
    return float(norm.cdf((math.sqrt(n) * abs(delta) - za * math.sqrt(psi)) / math.sqrt(psi - delta**2)))


def detectable(n: int, psi: float, power: float = POWER, alpha: float = ALPHA) -> float | None:
    """The smallest difference n questions show with ``power``, the discordance held at ``psi``; None when even a
    difference as large as psi (every disagreement one way) would not be seen."""
    za, zb = norm.ppf(1 - alpha / 2), norm.ppf(power)

    def short(d: float) -> float:
        return math.sqrt(n) * d - za * math.sqrt(psi) - zb * math.sqrt(max(psi - d * d, 0.0))

    if n <= 0 or short(psi) < 0:
        return None
    return float(brentq(short, 1e-9, psi))


@dataclass(frozen=True)
class Effect:
    """The paper's effect a check looks for: the two accuracies (fractions) and where they come from."""

    baseline: float
    method: float
    basis: str
    model: str = ""  # whose figures in the paper
    cells: bool = False  # the paper's own table cells, not an assumption or a given effect

    @property
    def delta(self) -> float:
        return self.method - self.baseline


def paper_effect(claim: Claim, model: str | None = None, datasets: list[str] | None = None) -> Effect | None:
    """The paper's two accuracies for ``model`` (default: its first), averaged over the datasets it reports both
    arms on (those among ``datasets`` when it reports any of them). A paper that states only an improvement gives
    the accuracies 50% -/+ half of it: of all pairs that far apart, the one that needs the most questions. None when
    the paper gives neither."""
    models = claim.models()
    model = model or (models[0] if models else None)
    both: dict[str, dict[str, float]] = {}
    for cell in claim.cells:
        if cell.model == model:
            both.setdefault(cell.dataset, {})[cell.arm] = cell.accuracy
    both = {d: arms for d, arms in both.items() if len(arms) == 2}
    if datasets and any(d in both for d in datasets):
        both = {d: arms for d, arms in both.items() if d in datasets}
    if both:
        base = sum(a[claim.baseline] for a in both.values()) / len(both) / 100
        method = sum(a[claim.method] for a in both.values()) / len(both) / 100
        return Effect(base, method, f"{model}, mean of the paper's cells on {', '.join(both)}", model or "", cells=True)
    stated = [d for d in claim.differences if d.model == model] or list(claim.differences)
    if datasets and any(d.dataset in datasets for d in stated):
        stated = [d for d in stated if d.dataset in datasets]
    if not stated:
        return None
    points = sum(d.points for d in stated) / len(stated) / 100
    up_to = " (the paper's best case: 'up to')" if any(d.up_to for d in stated) else ""
    return Effect(
        0.5 - points / 2,
        0.5 + points / 2,
        f"{stated[0].model}: the paper states only the improvement, {points:.1%}{up_to}; accuracies assumed "
        "50% -/+ half of it, which needs the most questions",
        stated[0].model,
    )


@dataclass(frozen=True)
class SampleSize:
    effect: Effect | None
    psi: float | None  # the discordant share assumed
    psi_basis: str
    needed: int | None  # questions for POWER at ALPHA; None when the paper gives no effect, or it is 0
    n: int  # the questions chosen
    power: float | None  # the chance n questions show the paper's effect
    detectable: float | None  # the smallest difference n questions show with POWER

    def lines(self) -> list[str]:
        out = []
        if self.effect is None:
            out.append(f"paper's effect: {SILENT_EFFECT}")
        else:
            e = self.effect
            out.append(f"paper's effect: {e.baseline:.1%} -> {e.method:.1%} ({e.delta:+.1%}); {e.basis}")
        if self.psi is not None:
            out.append(f"discordant share assumed: {self.psi:.1%} ({self.psi_basis})")
        if self.needed is not None:
            out.append(
                f"questions needed: {self.needed:,} for {POWER:.0%} power at alpha {ALPHA} (paired McNemar, "
                "Connor 1987)"
            )
        elif self.effect is not None:
            out.append("questions needed: no number suffices, the paper's two figures are equal")
        if self.power is not None:
            out.append(f"with {self.n:,} questions: {self.power:.0%} power to see the paper's effect")
        if self.detectable is not None:
            out.append(
                f"with {self.n:,} questions: the smallest difference seen with {POWER:.0%} power is "
                f"{self.detectable:.1%} (at the same discordance)"
            )
        elif self.psi is not None:
            out.append(f"with {self.n:,} questions: no difference can be seen with {POWER:.0%} power")
        return out


SILENT_EFFECT = "the paper gives neither both accuracies nor the improvement; give an effect to size the check"


def sample_size(
    claim: Claim,
    n: int | None = None,
    *,
    model: str | None = None,
    datasets: list[str] | None = None,
    discordance: float | None = None,
    effect: float | None = None,
) -> SampleSize:
    """``effect`` (a fraction, method minus baseline) stands in for the paper's where it gives none or the user
    wants another; ``discordance`` replaces the independence assumption. ``n`` defaults to the questions needed."""
    found = paper_effect(claim, model, datasets)
    if effect is not None:
        base = found.baseline if found is not None else 0.5 - effect / 2
        found = Effect(base, base + effect, f"an effect of {effect:+.1%} given for this check", model or "")
    psi, psi_basis = discordance, "given for this check"
    if psi is None and found is not None:
        psi = independent_discordance(found.baseline, found.method)
        psi_basis = "as if the two arms erred independently, from the paper's two accuracies; usually an overestimate"
    needed = questions_needed(found.delta, psi) if found is not None and psi is not None else None
    chosen = n if n is not None else (needed or 0)
    return SampleSize(
        effect=found,
        psi=psi,
        psi_basis=psi_basis,
        needed=needed,
        n=chosen,
        power=power_at(chosen, found.delta, psi) if found is not None and psi is not None and chosen else None,
        detectable=detectable(chosen, psi) if psi is not None and chosen else None,
    )
