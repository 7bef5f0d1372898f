"""The linker measured against a person: the shipped figure a screen shows next to the links.

``benchmarks/evidence_bench.py`` compares the linker with the reference labels (``data/evidence/
attribution_labels.jsonl``) and writes the figure to ``data/evidence/linker_agreement.json``; the studio reads that
file, never the benchmark's own results."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from core.studio.evidence.model import Agreement

DATA = Path(__file__).resolve().parents[3] / "data" / "evidence"
LABELS = DATA / "attribution_labels.jsonl"
FIGURE = DATA / "linker_agreement.json"


@lru_cache(maxsize=1)
def reference_agreement() -> Agreement | None:
    """The linker's agreement with the reference labels, for the linker version that was measured; None when the
    figure is missing (a screen then says the links are unmeasured)."""
    if not FIGURE.exists():
        return None
    data = json.loads(FIGURE.read_text(encoding="utf-8"))
    return Agreement(
        annotator=data["annotator"],
        n=data["n"],
        agree=data["agree"],
        agree_ci=tuple(data["agree_ci"]),
        precision=data["precision"],
        precision_ci=tuple(data["precision_ci"]),
        recall=data["recall"],
        recall_ci=tuple(data["recall_ci"]),
        per_method=data.get("per_method", {}),
    )


def reference_labels(path: Path = LABELS) -> list[dict]:
    """The shipped labels: one claim × document pair a line (run id, claim id, snippet id, label, annotator)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
