"""Stable identities: a question across runs (the qrels key) and a document across runs (pool deduplication).

A question's id is its teaching-pack case (``teaching/stemi``), its benchmark item (``medqa/0042``) when an
evaluation ran it, or else a hash of its normalised text and options (``q/3f9a0c1b2d4e``). Once a label has been
given, the id a question had then is kept in ``label_questions`` so later runs cannot move its labels.

A retrieved snippet is known by its corpus id. A generated document's id (``gen-1``) only names it within its run,
so in the pool it is known by a hash of its text (``gen-<hash>``). Documents with identical text are one pool item.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache


def normalise(text: str) -> str:
    return " ".join(text.split()).casefold()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def question_hash(question: str, options: dict[str, str]) -> str:
    body = normalise(question) + "\n" + "\n".join(f"{k.strip()}. {normalise(v)}" for k, v in sorted(options.items()))
    return _digest(body)


def text_hash(text: str) -> str:
    return _digest(normalise(text))[:16]


def generated_id(text: str) -> str:
    return f"gen-{text_hash(text)[:12]}"


@lru_cache(maxsize=1)
def teaching_ids() -> dict[str, tuple[str, str]]:
    """Question hash -> (question id, gold answer) for every teaching-pack case."""
    from core.studio.teaching import TeachingPackError, load_cases

    try:
        cases = load_cases()
    except TeachingPackError:
        return {}
    return {question_hash(c.question, c.options): (f"teaching/{c.id}", c.answer) for c in cases}


@dataclass(frozen=True)
class QuestionRef:
    """What a label needs to know about its question; registered with the first label."""

    question_id: str
    qhash: str | None
    question: str
    options: dict[str, str] = field(default_factory=dict)
    source: str = "hash"  # teaching pack, benchmark, hash, import

    def options_json(self) -> str:
        return json.dumps(self.options, ensure_ascii=False)


def derive_question(
    question: str,
    options: dict[str, str],
    bench_ids: dict[str, tuple[str, str]] | None = None,
    registered: dict[str, str] | None = None,
) -> QuestionRef:
    """The question's id: the one registered with its first label, else teaching pack, benchmark, hash.

    ``bench_ids`` maps question hashes to ``dataset/qid`` (from evaluation runs); ``registered`` maps question
    hashes to ids already used by labels.
    """
    qhash = question_hash(question, options)
    if registered and qhash in registered:
        return QuestionRef(registered[qhash], qhash, question, options, "registered")
    if qhash in teaching_ids():
        return QuestionRef(teaching_ids()[qhash][0], qhash, question, options, "teaching pack")
    if bench_ids and qhash in bench_ids:
        return QuestionRef(bench_ids[qhash][0], qhash, question, options, "benchmark")
    return QuestionRef(f"q/{qhash[:12]}", qhash, question, options, "hash")
