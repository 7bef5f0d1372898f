"""A claim checked: its two arms run on the same questions (a benchmark plan the existing runner resumes), each
arm's accuracy with its Wilson interval beside the paper's figure, the paired difference with its interval and the
exact McNemar p, a verdict in words, and what differs from the paper's setup."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from scipy.stats import norm

from core.engine.methods import get, registry
from core.engine.retrieval.hybrid import SCORING
from core.studio.claims.model import SILENT, Claim
from core.studio.claims.power import SampleSize, sample_size
from core.studio.eval.mirage import BenchItem, select
from core.studio.eval.plan import EvalPlan
from core.studio.eval.presets import PRESETS
from core.studio.eval.results import ItemResult
from core.studio.eval.stats import ALPHA, LEVEL, mcnemar, wilson

Verdict = Literal["consistent", "opposite", "too few", "smaller", "none yet"]


def per_dataset(n: int, datasets: list[str]) -> int:
    """Questions drawn from each dataset so that at least n are asked in all."""
    return max(1, math.ceil(n / len(datasets)))


def check_items(
    claim: Claim, bench: dict[str, dict[str, Any]], n: int, seed: int = 0, datasets: list[str] | None = None
) -> list[BenchItem]:
    """A seeded sample of the claim's datasets (a larger n with the same seed extends a smaller one)."""
    chosen = datasets or claim.datasets
    return select(bench, datasets=chosen, sample=per_dataset(n, chosen), seed=seed)


def claim_plan(claim: Claim, items: list[BenchItem]) -> EvalPlan:
    """Both arms on the same questions; an arm is a method or a preset, each at its paper's defaults."""
    methods = [a for a in claim.arms if a in registry()]
    presets = [a for a in claim.arms if a in PRESETS and a not in registry()]
    return EvalPlan(methods=methods, items=items, presets=presets)


@dataclass(frozen=True)
class ArmFigure:
    arm: str
    n: int
    correct: int
    errors: int
    accuracy: float | None
    low: float | None
    high: float | None
    paper: float | None  # the paper's accuracy for the same model and datasets (a fraction), when it gives one


@dataclass(frozen=True)
class SetupRow:
    what: str
    paper: str
    here: str
    differs: bool  # a silent paper counts as differing: nothing says it is the same


@dataclass(frozen=True)
class ClaimCheck:
    claim: str
    model: str
    n: int  # questions both arms finished
    arms: list[ArmFigure]
    difference: float | None  # method minus baseline accuracy, on the paired questions
    low: float | None
    high: float | None
    b: int  # baseline right, method wrong
    c: int  # method right, baseline wrong
    p: float | None
    verdict: Verdict
    verdict_text: str
    size: SampleSize
    setup: list[SetupRow] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["size"]["lines"] = self.size.lines()
        return out


def paired_interval(b: int, c: int, n: int) -> tuple[float, float]:
    """The 95% interval of a paired difference in accuracy, (c - b) / n: Agresti and Min's adjusted Wald interval
    (half a question added to each cell of the 2x2 table; Biometrics 61:515-523, 2005), which keeps its coverage
    at the small n a check often has, where the plain Wald interval does not."""
    m = n + 2
    bb, cc = b + 0.5, c + 0.5
    d = (cc - bb) / m
    se = math.sqrt(max((bb + cc) - (cc - bb) ** 2 / m, 0.0)) / m
    z = norm.ppf(0.5 + LEVEL / 2)
    return max(d - z * se, -1.0), min(d + z * se, 1.0)


def _verdict(claim: Claim, diff: float, p: float, size: SampleSize, n: int) -> tuple[Verdict, str]:
    paper_sign = 1 if size.effect is None or size.effect.delta >= 0 else -1
    better = claim.method if paper_sign > 0 else claim.baseline
    if p < ALPHA:
        if diff * paper_sign > 0:
            return "consistent", f"consistent with the paper: {better} is ahead here too (McNemar p = {p:.3f})"
        return "opposite", f"the opposite of the paper: {better} is behind here (McNemar p = {p:.3f})"
    needed = f"{size.needed:,}" if size.needed is not None else "unknown, the paper gives no effect to size it"
    if size.needed is not None and n >= size.needed:
        return "smaller", (
            f"no difference where the paper's should have shown: {n} questions, {size.needed:,} needed for it "
            f"(McNemar p = {p:.2f}); any effect here is smaller than the paper's"
        )
    return "too few", f"not enough questions to tell (n needed: {needed}; here {n}, McNemar p = {p:.2f})"


def _paper_accuracy(claim: Claim, arm: str, size: SampleSize) -> float | None:
    if size.effect is None or not size.effect.cells:
        return None
    return size.effect.baseline if arm == claim.baseline else size.effect.method


def setup_rows(claim: Claim, rows: list[ItemResult]) -> list[SetupRow]:
    """The paper's setup beside this check's: model, corpus, k, retriever."""
    models = sorted({r.model for r in rows})
    corpora = sorted({c for r in rows for c in json.loads(r.corpus or "[]")})
    ks: dict[str, int] = {}
    for arm in claim.arms:
        spec = get(PRESETS[arm].method if arm in PRESETS else arm)
        if spec.uses_retrieval and "k" in spec.params.model_fields:
            ks[arm] = spec.params().k
    s = claim.setup
    retrieves = any(get(PRESETS[a].method if a in PRESETS else a).uses_retrieval for a in claim.arms)
    return [
        SetupRow(
            "model", ", ".join(s.models) or SILENT, ", ".join(models) or "not run yet", not set(models) <= set(s.models)
        ),
        SetupRow(
            "corpus",
            ", ".join(s.corpus) if s.corpus else SILENT,
            ", ".join(corpora) or "none searched",
            set(corpora) != set(s.corpus or []),
        ),
        SetupRow(
            "k",
            str(s.k) if s.k is not None else SILENT,
            "; ".join(f"{arm}: {k}" for arm, k in ks.items()) or "no retrieval",
            s.k is None or any(k != s.k for k in ks.values()),
        ),
        SetupRow("retriever", s.retriever or SILENT, SCORING if retrieves else "no retrieval", True),
    ]


def check_claim(
    claim: Claim, rows: list[ItemResult], *, paper_model: str | None = None, **size_knobs: Any
) -> ClaimCheck:
    """The check from the finished rows of its plan (``evaluate`` or ``finished_rows``); ``size_knobs`` go to
    ``sample_size`` (discordance, effect)."""
    datasets = list(dict.fromkeys(r.dataset for r in rows)) or claim.datasets
    by_arm: dict[str, dict[tuple, ItemResult]] = {a: {} for a in claim.arms}
    for row in rows:
        if row.arm in by_arm:
            by_arm[row.arm][(row.dataset, row.qid, row.asked)] = row
    common = sorted(by_arm[claim.baseline].keys() & by_arm[claim.method].keys())
    n = len(common)
    size = sample_size(claim, n or None, model=paper_model, datasets=datasets, **size_knobs)
    figures = []
    for arm in claim.arms:
        done = [by_arm[arm][k] for k in common]
        correct = sum(bool(r.correct) for r in done)
        ci = wilson(correct, n)
        figures.append(
            ArmFigure(
                arm,
                n,
                correct,
                sum(r.status != "ok" for r in done),
                correct / n if n else None,
                ci[0] if ci else None,
                ci[1] if ci else None,
                _paper_accuracy(claim, arm, size),
            )
        )
    model = ", ".join(sorted({r.model for r in rows})) or ""
    if not n:
        return ClaimCheck(
            claim.id, model, 0, figures, None, None, None, 0, 0, None, "none yet",
            "no question has been answered by both arms yet", size, setup_rows(claim, rows),
        )  # fmt: skip
    base = [bool(by_arm[claim.baseline][k].correct) for k in common]
    new = [bool(by_arm[claim.method][k].correct) for k in common]
    b, c, p = mcnemar(base, new)
    diff = (c - b) / n
    low, high = paired_interval(b, c, n)
    verdict, text = _verdict(claim, diff, p, size, n)
    return ClaimCheck(
        claim.id, model, n, figures, diff, low, high, b, c, p, verdict, text, size, setup_rows(claim, rows)
    )
