"""Evidence a clinician can check: every claim of a run linked to the words of the documents that support it.

The public API (screens and the command line use only these):

- ``claims_of(run)``: every claim (sentence) of the final answer, its rationale and the agents' findings, with its
  origin and offsets;
- ``link_run(run)``: the ``EvidenceMap`` of a run (claims, documents retrieved or generated, ``SupportLink``s with
  span, level and why), computed offline and cached by run id and linker version;
- ``judge_map(emap, run, llm)``: the optional judge pass (one call per claim, cached by the response cache) that adds
  a reason beside the offline one, with its cost;
- ``reference_agreement()``: how far the links agree with a person's labels, to show beside them.
"""

from core.studio.evidence.agreement import reference_agreement, reference_labels
from core.studio.evidence.claims import claims_of, cut_at, source_text
from core.studio.evidence.judge import judge_map
from core.studio.evidence.linker import VERSION, documents_of, link_run
from core.studio.evidence.model import (
    LEVEL_WORDS,
    LEVELS,
    Agreement,
    Claim,
    Document,
    EvidenceMap,
    JudgeCost,
    Level,
    SupportLink,
)

__all__ = [
    "LEVELS",
    "LEVEL_WORDS",
    "VERSION",
    "Agreement",
    "Claim",
    "Document",
    "EvidenceMap",
    "JudgeCost",
    "Level",
    "SupportLink",
    "claims_of",
    "documents_of",
    "judge_map",
    "link_run",
    "reference_agreement",
    "reference_labels",
    "cut_at",
    "source_text",
]
