"""Papers' claims as one-click checks: the claims as data (``model``), the questions a paired test needs before
any is spent (``power``, ``estimate``), the check itself over the benchmark runner's results (``check``) and its
Markdown report (``report``)."""

from core.studio.claims.check import ClaimCheck, check_claim, check_items, claim_plan
from core.studio.claims.model import Claim, get_claim, load_claims
from core.studio.claims.power import SampleSize, sample_size

__all__ = [
    "Claim",
    "ClaimCheck",
    "SampleSize",
    "check_claim",
    "check_items",
    "claim_plan",
    "get_claim",
    "load_claims",
    "sample_size",
]
