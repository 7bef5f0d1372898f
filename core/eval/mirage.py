"""The MIRAGE benchmark format: ``{dataset: {question_id: {"question", "options", "answer"}}}``, .json or .json.gz,
and a development split ``{dataset: [question_id, ...]}``."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.question import Question


class BenchmarkError(ValueError):
    """A benchmark or ids file that cannot be used; the message says which file and entry."""


@dataclass(frozen=True)
class BenchItem:
    dataset: str
    qid: str
    question: Question
    answer: str  # the gold option letter


def _read_json(path: Path) -> Any:
    path = Path(path)
    if not path.is_file():
        raise BenchmarkError(f"{path} does not exist")
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            return json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchmarkError(f"{path} is not readable JSON: {exc}") from exc


def load_benchmark(path: Path | str) -> dict[str, dict[str, Any]]:
    data = _read_json(Path(path))
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise BenchmarkError(f"{path} is not in the MIRAGE format {{dataset: {{question_id: {{question, options, answer}}}}}}")
    return data


def load_ids(path: Path | str) -> dict[str, list[str]]:
    data = _read_json(Path(path))
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise BenchmarkError(f"{path} should map each dataset to a list of question ids")
    return {dataset: [str(q) for q in qids] for dataset, qids in data.items()}


def _item(dataset: str, qid: str, raw: Any) -> BenchItem:
    where = f"{dataset}/{qid}"
    if not isinstance(raw, dict) or not {"question", "options", "answer"} <= raw.keys():
        raise BenchmarkError(f"{where}: an entry needs 'question', 'options' and 'answer'")
    try:
        question = Question(text=raw["question"], options=raw["options"])
    except ValidationError as exc:
        raise BenchmarkError(f"{where}: {'; '.join(e['msg'] for e in exc.errors())}") from exc
    if raw["answer"] not in question.options:
        raise BenchmarkError(f"{where}: the answer {raw['answer']!r} is not one of the options {list(question.options)}")
    return BenchItem(dataset, qid, question, raw["answer"])


def select(bench: dict[str, dict[str, Any]], ids: dict[str, list[str]] | None = None,
           datasets: list[str] | None = None, limit: int | None = None) -> list[BenchItem]:
    """The questions to run: the ids file's (or every) question of each chosen dataset, the first ``limit`` of each."""
    source = ids if ids is not None else {name: list(entries) for name, entries in bench.items()}
    chosen = datasets or list(source)
    unknown = [d for d in chosen if d not in source or d not in bench]
    if unknown:
        raise BenchmarkError(f"unknown dataset(s) {', '.join(unknown)}; available: {', '.join(d for d in source if d in bench)}")
    items = []
    for dataset in chosen:
        qids = source[dataset][:limit] if limit else source[dataset]
        missing = [q for q in qids if q not in bench[dataset]]
        if missing:
            raise BenchmarkError(f"{dataset}: {len(missing)} id(s) are not in the benchmark, e.g. {missing[0]!r}")
        items += [_item(dataset, qid, bench[dataset][qid]) for qid in qids]
    return items
