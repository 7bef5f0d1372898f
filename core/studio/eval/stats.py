"""The statistics every benchmark table carries: Wilson 95% intervals on accuracies, and for every pair of arms
run on the same questions the paired exact McNemar test with the share of questions they agree on.

Accuracy is correct answers over all questions asked; a run that ended in error counts as not correct (and is
counted as an error next to it), here and in the paired tests, so no error is ever silently scored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from scipy.stats import binomtest

from core.studio.eval.results import ItemResult

LEVEL = 0.95
ALPHA = 0.05
Label = Callable[[str], str]  # an arm's name as shown


def wilson(correct: int, n: int) -> tuple[float, float] | None:
    """The Wilson score interval (no continuity correction) for ``correct`` of ``n``; None when n is 0."""
    if n == 0:
        return None
    ci = binomtest(correct, n).proportion_ci(LEVEL, method="wilson")
    return float(ci.low), float(ci.high)


@dataclass(frozen=True)
class Paired:
    first: str
    second: str
    n: int  # questions both arms finished
    b: int  # first correct, second not
    c: int  # second correct, first not
    p: float  # exact two-sided McNemar p-value (a binomial test on the b + c discordant questions)
    agreement: float  # share of the n on which both were correct or both not
    same_answer: float  # share of the n on which both chose the same option (an error chooses none)

    @property
    def distinguishable(self) -> bool:
        return self.p < ALPHA

    def ordered(self, label: Label = str) -> tuple[str, str, int, int]:
        """(the arm right more often where they differ, the other, its wins, its losses)."""
        a, b = label(self.first), label(self.second)
        return (a, b, self.b, self.c) if self.b >= self.c else (b, a, self.c, self.b)

    def reading(self, label: Label = str) -> str:
        better, worse, wins, losses = self.ordered(label)
        if not self.distinguishable:
            return (
                f"{better} and {worse} are not distinguishable on these {self.n} questions "
                f"(McNemar p = {self.p:.2f}; {wins} vs {losses} discordant)"
            )
        return (
            f"{better} is more accurate than {worse} on these {self.n} questions "
            f"(right where the other was wrong {wins} vs {losses} times; McNemar p = {self.p:.3f})"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "first": self.first,
            "second": self.second,
            "n": self.n,
            "b": self.b,
            "c": self.c,
            "p": round(self.p, 4),
            "agreement": round(self.agreement, 4),
            "same_answer": round(self.same_answer, 4),
            "distinguishable": self.distinguishable,
        }


def mcnemar(first: list[bool], second: list[bool]) -> tuple[int, int, float]:
    """(b, c, exact p) for paired outcomes; p is 1 when the two never differ."""
    b = sum(x and not y for x, y in zip(first, second))
    c = sum(y and not x for x, y in zip(first, second))
    return b, c, (float(binomtest(b, b + c, 0.5).pvalue) if b + c else 1.0)


def _by_arm(rows: Iterable[ItemResult]) -> dict[str, dict[tuple[str, str, str], ItemResult]]:
    out: dict[str, dict[tuple[str, str, str], ItemResult]] = {}
    for row in rows:
        out.setdefault(row.arm, {})[(row.dataset, row.qid, row.asked)] = row
    return out


def pairs(rows: Iterable[ItemResult]) -> list[Paired]:
    """Every pair of arms over the questions both finished (the same question as asked), in the rows' arm order."""
    arms = _by_arm(rows)
    out = []
    for first, second in combinations(arms, 2):
        common = sorted(arms[first].keys() & arms[second].keys())
        if not common:
            continue
        x = [bool(arms[first][k].correct) for k in common]
        y = [bool(arms[second][k].correct) for k in common]
        same = sum(
            arms[first][k].predicted is not None and arms[first][k].predicted == arms[second][k].predicted
            for k in common
        )
        b, c, p = mcnemar(x, y)
        agree = sum(i == j for i, j in zip(x, y))
        out.append(
            Paired(first, second, len(common), b, c, p, agreement=agree / len(common), same_answer=same / len(common))
        )
    return out


def overall_reading(found: list[Paired], label: Label = str) -> str:
    """One line for a whole pairwise table."""
    if not found:
        return "No two arms have finished the same questions yet, so none can be compared."
    if len(found) == 1:
        return found[0].reading(label)
    apart = [p for p in found if p.distinguishable]
    sizes = sorted({p.n for p in found})
    on = f"these {sizes[0]} questions" if len(sizes) == 1 else f"the {sizes[0]}–{sizes[-1]} questions each pair shares"
    if not apart:
        return (
            f"No pair is distinguishable on {on} (paired exact McNemar, p ≥ {ALPHA} for all {len(found)} pairs): "
            "the data do not rank them."
        )
    lines = "; ".join("{} over {} (p = {:.3f})".format(*p.ordered(label)[:2], p.p) for p in apart)
    return (
        f"{len(apart)} of {len(found)} pairs differ at p < {ALPHA} on {on}: {lines}. The others are not "
        "distinguishable (p-values not adjusted for the number of pairs)."
    )


def pareto_front(points: dict[str, tuple[float, float]]) -> set[str]:
    """Names whose (cost, accuracy) no other point beats: no cheaper-or-equal point is at least as accurate,
    with one of the two strictly better."""
    front = set()
    for name, (cost, acc) in points.items():
        beaten = any(
            (c <= cost and a >= acc) and (c < cost or a > acc) for other, (c, a) in points.items() if other != name
        )
        if not beaten:
            front.add(name)
    return front
