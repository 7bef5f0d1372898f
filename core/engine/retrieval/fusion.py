"""Reciprocal rank fusion (Cormack et al., 2009): score(d) = sum over rankings of 1 / (k + rank of d),
ranks counted from 1; a document missing from a ranking gets nothing from it."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

RRF_K = 60


def rrf(rankings: Mapping[str, Sequence[K]], k: int = RRF_K) -> list[tuple[K, float]]:
    """Fuse named rankings (best first) into one, best first; ties go to the better single rank."""
    fused: dict[K, float] = {}
    best: dict[K, int] = {}
    for ranking in rankings.values():
        for rank, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank)
            best[key] = min(best.get(key, rank), rank)
    return sorted(fused.items(), key=lambda item: (-item[1], best[item[0]]))


def merge_by_score(lists: Sequence[Sequence[tuple[K, float]]], n: int) -> list[tuple[K, float]]:
    """One ranking from several (key, score) lists, best score first: how one retriever's results
    from several corpora become one list before fusion (as MedRAG merges its corpora)."""
    merged = [item for items in lists for item in items]
    merged.sort(key=lambda item: -item[1])
    return merged[:n]
