"""Agreement between annotators on the snippets they both judged: linear-weighted Cohen's kappa per pair
(scikit-learn, with a bootstrap interval), Fleiss' kappa (statsmodels) and Krippendorff's ordinal alpha
(``krippendorff``) for three or more, and the list of disagreements worth a second look."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import partial
from itertools import combinations

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from core.studio.labels.grades import GRADES, RELEVANT

Item = tuple[str, str]  # (question id, pool id)
Judged = dict[Item, dict[str, int]]  # item -> annotator -> grade
SCALE = sorted(GRADES)
BOOTSTRAP = 2000
MIN_FOR_INTERVAL = 10  # a percentile bootstrap over fewer items is too coarse to mean much
SINGLE_GRADE = "undefined: a single grade used"


@dataclass(frozen=True)
class Agreement:
    """One coefficient over ``n`` items; ``value`` is None when it is undefined, and ``why`` then says why."""

    name: str
    annotators: tuple[str, ...]
    n: int
    value: float | None
    low: float | None = None
    high: float | None = None
    exact: float | None = None  # share of items with identical grades (pairs only)
    why: str = ""


def _kappa(a: list[int], b: list[int]) -> float | None:
    with warnings.catch_warnings():  # an undefined kappa is reported as such, not warned about
        warnings.simplefilter("ignore")
        value = cohen_kappa_score(a, b, labels=SCALE, weights="linear")
    return None if math.isnan(value) else float(value)


def kappas(a: np.ndarray, b: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """Linear-weighted kappa of many resamples at once (rows of ``picks`` index the items), by scikit-learn's formula:
    1 - sum(W * observed) / sum(W * expected), W = |i - j|. Resamples where it is undefined are left out."""
    k, rounds = len(SCALE), picks.shape[0]
    codes = (a[picks] * k + b[picks]) + (np.arange(rounds) * k * k)[:, None]
    observed = np.bincount(codes.ravel(), minlength=rounds * k * k).reshape(rounds, k, k).astype(float)
    expected = observed.sum(2)[:, :, None] * observed.sum(1)[:, None, :] / observed.sum((1, 2))[:, None, None]
    weights = np.abs(np.subtract.outer(np.arange(k), np.arange(k)))
    disagree, chance = (weights * observed).sum((1, 2)), (weights * expected).sum((1, 2))
    defined = chance > 0
    return 1 - disagree[defined] / chance[defined]


def _bootstrap(a: np.ndarray, b: np.ndarray, seed: int = 7) -> tuple[float | None, float | None]:
    """A percentile interval from resampling the items (None when there are too few items to resample)."""
    if len(a) < MIN_FOR_INTERVAL:
        return None, None
    values = kappas(a, b, np.random.default_rng(seed).integers(0, len(a), (BOOTSTRAP, len(a))))
    if len(values) < BOOTSTRAP // 2:
        return None, None
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))


def pairwise(judged: Judged) -> list[Agreement]:
    """Linear-weighted Cohen's kappa for every pair of annotators, on the items both judged."""
    annotators = sorted({a for grades in judged.values() for a in grades})
    found = []
    for x, y in combinations(annotators, 2):
        both = [(g[x], g[y]) for g in judged.values() if x in g and y in g]
        if not both:
            found.append(Agreement("Cohen's kappa (linear)", (x, y), 0, None, why="no snippet judged by both"))
            continue
        a, b = (np.array(side) for side in zip(*both))
        exact = float(np.mean(a == b))
        value = _kappa(a.tolist(), b.tolist())
        if value is None:
            found.append(
                Agreement(
                    "Cohen's kappa (linear)",
                    (x, y),
                    len(both),
                    None,
                    exact=exact,
                    why="undefined: both gave one and the same grade to every shared snippet",
                )
            )
            continue
        low, high = _bootstrap(a, b)
        found.append(
            Agreement(
                "Cohen's kappa (linear)",
                (x, y),
                len(both),
                value,
                low,
                high,
                exact,
                "" if low is not None else f"no interval below {MIN_FOR_INTERVAL} shared snippets",
            )
        )
    return found


def _panel(judged: Judged) -> tuple[str, ...] | None:
    """Every annotator, when there are the three or more that Fleiss' kappa and Krippendorff's alpha are for."""
    annotators = tuple(sorted({a for grades in judged.values() for a in grades}))
    return annotators if len(annotators) >= 3 else None


def fleiss(judged: Judged) -> Agreement | None:
    """Fleiss' kappa over the items every annotator judged (it needs the same number of ratings per item)."""
    if not (annotators := _panel(judged)):
        return None
    complete = [[g[a] for a in annotators] for g in judged.values() if all(a in g for a in annotators)]
    result = partial(Agreement, "Fleiss' kappa", annotators, len(complete))
    if len(complete) < 2:
        return result(None, why="fewer than 2 snippets judged by every annotator")
    table, _ = aggregate_raters(np.array(complete), n_cat=len(SCALE))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = float(fleiss_kappa(table, method="fleiss"))
    return result(None, why=SINGLE_GRADE) if math.isnan(value) else result(value)


def alpha(judged: Judged) -> Agreement | None:
    """Krippendorff's alpha (ordinal) over every item at least two annotators judged; missing labels allowed."""
    if not (annotators := _panel(judged)):
        return None
    items = [g for g in judged.values() if len(g) >= 2]
    result = partial(Agreement, "Krippendorff's alpha (ordinal)", annotators, len(items))
    if len(items) < 2:
        return result(None, why="fewer than 2 snippets judged by two or more annotators")
    data = np.array([[g.get(a, np.nan) for g in items] for a in annotators], dtype=float)
    if len({v for v in data[~np.isnan(data)]}) < 2:
        return result(None, why=SINGLE_GRADE)
    return result(float(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=SCALE)))


@dataclass(frozen=True)
class Disagreement:
    item: Item
    first: str
    second: str
    first_grade: int
    second_grade: int
    gap: int
    split: bool  # one called it relevant, the other not


def disagreements(judged: Judged, relevant: int = RELEVANT) -> list[Disagreement]:
    """Pairs of labels 2 or more grades apart, or split on relevance (one ≥ ``relevant``, one below); widest first."""
    found = []
    for item, grades in judged.items():
        for x, y in combinations(sorted(grades), 2):
            gx, gy = grades[x], grades[y]
            split = (gx >= relevant) != (gy >= relevant)
            if abs(gx - gy) >= 2 or split:
                found.append(Disagreement(item, x, y, gx, gy, abs(gx - gy), split))
    return sorted(found, key=lambda d: (-d.gap, d.item))
