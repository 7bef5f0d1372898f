"""How corpora are laid out in one Qdrant collection.

Every snippet is a point with two named vectors, ``dense`` (the embedder's, normalised, compared by dot product: the
cosine the in-process index uses) and ``bm25`` (sparse, ``core.engine.retrieval.qdrant.sparse``), and a payload with its
corpus, id, title, text and row (its position in its corpus, the in-process index's row, which orders ties the same
way). Each corpus also has points without vectors: its record (what was ingested from where, how far, its BM25
statistics) and its document frequencies in buckets. Ids are UUIDs derived from names, so an ingest that is repeated
or resumed overwrites instead of adding.
"""

from __future__ import annotations

import uuid

COLLECTION = "medrag_snippets"
DENSE = "dense"
SPARSE = "bm25"
CORPUS = "corpus"  # the payload field searches filter on (snippets only)
STATS_OF = "stats_of"  # the payload field of a corpus's record and frequency buckets
KIND = "kind"  # "record" or "df", beside STATS_OF
_NAMESPACE = uuid.UUID("5a0c2a57-8a43-4d8e-9f1e-6f2b0f4f3b11")


def point_id(corpus: str, snippet_id: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"snippet\0{corpus}\0{snippet_id}"))


def record_id(corpus: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"record\0{corpus}"))


def df_id(corpus: str, bucket: int) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"df\0{corpus}\0{bucket}"))
