"""Which options an arm chooses, against which options are right, per dataset.

A reader can lean on one option whatever the question: on the development split the embedded model reading
on-topic snippets that do not answer a yes/no question said "yes" 17 times in 20, where "yes" was right 10 times,
while its own chain of thought stayed balanced. Accuracy alone hides that; this table shows it. The test is
Stuart–Maxwell's for marginal homogeneity (statsmodels): the chosen and the gold options of the same questions
have the same distribution. It is asymptotic, so rough on a few questions, and undefined when no question was
answered differently from its gold option in a way the test can use.

Per dataset only: option letters mean different things in different datasets (A is "yes" in PubMedQA, the first
of four in MedQA), so pooling them would mix meanings.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.studio.eval.results import ItemResult
from core.studio.eval.stats import ALPHA

Label = Callable[[str], str]


@dataclass(frozen=True)
class AnswerShares:
    arm: str
    dataset: str
    answered: int  # questions the arm chose an option for (a run that ended in error chooses none)
    unanswered: int
    gold: dict[str, int]  # option -> questions it was right for, among those answered
    chosen: dict[str, int]  # option -> questions the arm chose it
    p: float | None  # Stuart–Maxwell p-value; None when the test is undefined here

    @property
    def options(self) -> list[str]:
        return sorted(set(self.gold) | set(self.chosen))

    @property
    def leaning(self) -> str | None:
        """The option chosen most often beyond the questions it was right for, if any is chosen beyond them."""
        surplus = {o: self.chosen.get(o, 0) - self.gold.get(o, 0) for o in self.options}
        best = max(surplus, key=surplus.__getitem__, default=None)  # ties: the first option
        return best if best is not None and surplus[best] > 0 else None

    @property
    def leans(self) -> bool:
        return self.p is not None and self.p < ALPHA

    def reading(self, label: Label = str) -> str:
        who = f"{label(self.arm)} on {self.dataset}"
        lean = self.leaning
        if lean is None:
            return (
                f"{who}: chose each option as often as it was right ({self.answered} question"
                f"{'' if self.answered == 1 else 's'})"
            )
        chosen, right = _times(self.chosen.get(lean, 0)), _times(self.gold.get(lean, 0))
        said = f"chose {lean} {chosen} in {self.answered}, right {right}"
        if self.p is None:
            return f"{who}: {said}; too few differing answers to test"
        if self.leans:
            return f"{who} leans to {lean}: {said} (Stuart–Maxwell p = {self.p:.3f})"
        return f"{who}: {said}; a lean the data cannot show (Stuart–Maxwell p = {self.p:.2f})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "dataset": self.dataset,
            "answered": self.answered,
            "unanswered": self.unanswered,
            "gold": self.gold,
            "chosen": self.chosen,
            "leaning": self.leaning,
            "p": None if self.p is None else round(self.p, 4),
            "leans": self.leans,
        }


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def stuart_maxwell(pairs: list[tuple[str, str]]) -> float | None:
    """p-value that the first and the second options of ``pairs`` (gold, chosen) share one distribution."""
    from statsmodels.stats.contingency_tables import SquareTable

    options = sorted({o for pair in pairs for o in pair})
    if len(options) < 2:
        return None
    if Counter(g for g, _ in pairs) == Counter(c for _, c in pairs):
        return 1.0  # the same counts: nothing to test (the covariance may not invert then)
    index = {o: i for i, o in enumerate(options)}
    table = np.zeros((len(options), len(options)))
    for gold, chosen in pairs:
        table[index[gold], index[chosen]] += 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a covariance matrix that cannot be inverted gives NaN, handled below
        p = float(SquareTable(table, shift_zeros=False).homogeneity().pvalue)
    return None if math.isnan(p) else p


def answer_shares(rows: list[ItemResult]) -> list[AnswerShares]:
    """One line per (arm, dataset), in the order rows first name them."""
    groups: dict[tuple[str, str], list[ItemResult]] = {}
    for row in rows:
        groups.setdefault((row.arm, row.dataset), []).append(row)
    datasets = list(dict.fromkeys(r.dataset for r in rows))
    arms = list(dict.fromkeys(r.arm for r in rows))
    out = []
    for key in [(a, d) for a in arms for d in datasets if (a, d) in groups]:
        pairs = [(r.gold, r.predicted) for r in groups[key] if r.predicted]
        out.append(
            AnswerShares(
                arm=key[0],
                dataset=key[1],
                answered=len(pairs),
                unanswered=len(groups[key]) - len(pairs),
                gold=dict(sorted(Counter(g for g, _ in pairs).items())),
                chosen=dict(sorted(Counter(c for _, c in pairs).items())),
                p=stuart_maxwell(pairs),
            )
        )
    return out


def format_answers(found: list[AnswerShares], label: Label = str) -> str:
    """Per arm and dataset: each option's times chosen / times right, the test, and the leans the data show."""
    lines = [
        f"{label(a.arm)}  {a.dataset}: "
        + "  ".join(f"{o} {a.chosen.get(o, 0)}/{a.gold.get(o, 0)}" for o in a.options)
        + ("  (p not computable)" if a.p is None else f"  (p = {a.p:.3f})")
        for a in found
    ]
    return "\n".join([*lines, *leans_found(found, label)])


def leans_found(found: list[AnswerShares], label: Label = str) -> list[str]:
    """The reading of each lean the data show, or one line saying there is none."""
    return [a.reading(label) for a in found if a.leans] or [
        "no arm leans to an option more than the data can separate from chance"
    ]
