"""A paper's claim as data (``data/claims/claims.json``): the comparison in one sentence, its two arms as the
studio's methods or presets, the MIRAGE subsets a check runs, the table cells the paper reports, and the setup it
used. Anything the paper (as summarised in the seeds this studio keeps) does not say is ``None`` or listed under
``silent``, and every screen says "paper silent" for it, so no figure is ever made up."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.engine.methods import registry
from core.engine.paths import REPO_ROOT
from core.studio.eval.presets import PRESETS

CLAIMS_FILE = REPO_ROOT / "data" / "claims" / "claims.json"
MIRAGE = ("mmlu", "medqa", "medmcqa", "pubmedqa", "bioasq")
# corpora by the names ``python -m core corpora get`` knows them; medcorp is MedRAG's four together
CORPORA = ("textbooks", "statpearls", "pubmed", "wikipedia", "medcorp")
SILENT = "paper silent"


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Cell(_Closed):
    """One table cell: an arm's accuracy (percent) for one model on one dataset."""

    model: str
    dataset: str  # a MIRAGE subset, or the paper's own benchmark name where it used another
    arm: str
    accuracy: float = Field(ge=0, le=100)
    approximate: bool = False  # the paper gives "~70"


class Difference(_Closed):
    """An improvement the paper states without both accuracies ("up to 16.67% on BioASQ")."""

    model: str
    dataset: str
    points: float
    up_to: bool  # the paper's best case, not its average


class Setup(_Closed):
    corpus: list[str] | None  # names from CORPORA; None: paper silent
    k: int | None  # snippets retrieved per query
    retriever: str | None
    models: list[str]


class Claim(_Closed):
    id: str = Field(pattern=r"^[a-z0-9-]+$")
    paper: str
    arxiv: str
    claim: str  # one sentence
    baseline: str  # an arm: a method's name or a preset's
    method: str  # the arm the paper says is better
    datasets: list[str] = Field(min_length=1)  # MIRAGE subsets a check runs
    cells: list[Cell]
    differences: list[Difference]
    setup: Setup
    source: str  # where in the paper the figures are
    silent: list[str]  # what the paper does not say, in words

    @model_validator(mode="after")
    def _known(self) -> Claim:
        arms = set(registry()) | set(PRESETS)
        for arm in (self.baseline, self.method):
            if arm not in arms:
                raise ValueError(f"{self.id}: {arm!r} is neither a method nor a preset")
        for cell in self.cells:
            if cell.arm not in (self.baseline, self.method):
                raise ValueError(f"{self.id}: a cell's arm {cell.arm!r} is not one of the claim's two arms")
        unknown = [d for d in self.datasets if d not in MIRAGE]
        if unknown:
            raise ValueError(f"{self.id}: {', '.join(unknown)} are not MIRAGE subsets ({', '.join(MIRAGE)})")
        odd = [c for c in self.setup.corpus or [] if c not in CORPORA]
        if odd:
            raise ValueError(f"{self.id}: unknown corpus {', '.join(odd)}; known: {', '.join(CORPORA)}")
        if not self.cells and not self.differences:
            raise ValueError(f"{self.id}: a claim needs the paper's cells or its stated improvement")
        return self

    @property
    def arms(self) -> tuple[str, str]:
        return self.baseline, self.method

    def models(self) -> list[str]:
        """The models the paper's figures are for, in the order they appear."""
        return list(dict.fromkeys([c.model for c in self.cells] + [d.model for d in self.differences]))


class ClaimFile(_Closed):
    claims: list[Claim]

    @model_validator(mode="after")
    def _unique(self) -> ClaimFile:
        ids = [c.id for c in self.claims]
        if len(ids) != len(set(ids)):
            raise ValueError("claim ids must be unique")
        return self


@lru_cache(maxsize=4)
def load_claims(path: Path = CLAIMS_FILE) -> dict[str, Claim]:
    return {c.id: c for c in ClaimFile.model_validate_json(path.read_text(encoding="utf-8")).claims}


def get_claim(claim_id: str) -> Claim:
    claims = load_claims()
    if claim_id not in claims:
        raise KeyError(f"unknown claim {claim_id!r}; choose one of: {', '.join(claims)}")
    return claims[claim_id]
