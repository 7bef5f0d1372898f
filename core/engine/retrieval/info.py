"""What the Settings screen and the command line show of a corpus: its size and its index's status."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.engine.retrieval.corpus import CorpusSource


@dataclass(frozen=True)
class CorpusInfo:
    name: str
    path: Path
    snippets: int  # indexed snippets when built, otherwise non-blank lines
    built: bool  # an index for exactly these files, model and parameters exists
    stale: bool  # an index exists but the corpus (or model, or parameters) changed since
    corpus_bytes: int
    index_bytes: int
    skipped_lines: int
    renamed_ids: int
    split_passages: int = 0  # passages longer than a chunk, indexed as several
    index_type: str = ""
    build_seconds: float | None = None
    embed_precision: str = ""  # the snippets' vectors: float32, or bfloat16 where the CPU computes it natively
    description: str = ""
    license: str = ""
    attribution: str = ""
    ingested: int | None = None  # snippets written by an ingest into Qdrant that has not finished (it resumes)

    @classmethod
    def of(
        cls,
        source: CorpusSource,
        built: dict | None,
        *,
        stale: bool,
        snippets: int,
        index_bytes: int = 0,
        ingested: int | None = None,
    ) -> CorpusInfo:
        """A corpus from its source and, when its index is built for it, what the build recorded (a manifest)."""
        m, meta = built or {}, source.meta
        return cls(
            name=source.name,
            path=source.path,
            snippets=snippets,
            built=built is not None,
            stale=stale,
            corpus_bytes=source.size_bytes,
            index_bytes=index_bytes,
            skipped_lines=m.get("skipped_count", 0),
            renamed_ids=m.get("renamed_count", 0),
            split_passages=m.get("split_passages", 0),
            index_type=m.get("index_type", ""),
            build_seconds=m.get("build_seconds"),
            embed_precision=m.get("embed_precision", "float32") if built else "",
            description=meta.get("description", ""),
            license=meta.get("license", ""),
            attribution=meta.get("attribution", ""),
            ingested=ingested,
        )
