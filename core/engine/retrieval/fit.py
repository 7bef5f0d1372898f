"""Do the corpora hold anything on a benchmark's topics? A retrieval check of a few questions, no model: each
question's best passage among the top ``k``, by the dense embedder's cosine similarity to the question.

``ON_TOPIC`` comes from the default corpus (HPO definitions and the teaching pack), measured on its own teaching
questions (20 of 22 reach it, median 0.64) and on 40 MIRAGE development questions, which it was not written for (19
of 40, median 0.48). The check separates a corpus written for the questions from one that is not, not good passages
from bad ones: it says when a benchmark would mostly retrieve off-topic text.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from core.engine.retrieval.retriever import Retriever

ON_TOPIC = 0.5  # cosine similarity of a question to its best passage that counts as a passage on its topic
K = 5


@dataclass(frozen=True)
class TopicFit:
    best: list[float]  # each question's best similarity

    @property
    def on_topic(self) -> int:
        return sum(b >= ON_TOPIC for b in self.best)

    @property
    def median(self) -> float:
        return statistics.median(self.best) if self.best else 0.0

    @property
    def fits(self) -> bool:
        """Half the questions or more found a passage on their topic."""
        return 2 * self.on_topic >= len(self.best)

    def line(self) -> str:
        return (
            f"{self.on_topic} of {len(self.best)} questions found a passage on their topic (similarity "
            f"{ON_TOPIC} or more; median best {self.median:.2f})"
        )


def topic_fit(
    retriever: Retriever, questions: list[str], k: int = K, progress: Callable[[int, int], None] | None = None
) -> TopicFit:
    best = []
    for n, question in enumerate(questions, 1):
        hits = retriever.search(question, k)
        similarities = retriever.similarity(question, [h.text for h in hits]) if hits else []
        best.append(max(similarities, default=0.0))
        if progress:
            progress(n, len(questions))
    return TopicFit(best)
