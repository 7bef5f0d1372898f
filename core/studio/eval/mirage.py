"""The MIRAGE benchmark format: ``{dataset: {question_id: {"question", "options", "answer"}}}``, .json or .json.gz
(a file or uploaded bytes), and a development split ``{dataset: [question_id, ...]}``.

Every problem is a ``BenchmarkError`` whose message names the file and the place in it (dataset/question id).
"""

from __future__ import annotations

import gzip
import json
import random
import zlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.engine.question import Question
from core.studio.eval.keys import asked_key

SHAPE = "{dataset: {question_id: {question, options, answer}}}"
SHOWN_PROBLEMS = 8


class BenchmarkError(ValueError):
    """A benchmark or ids file that cannot be used; the message says which file and entry."""


@dataclass(frozen=True)
class BenchItem:
    dataset: str
    qid: str
    question: Question
    answer: str  # the gold option letter

    @cached_property
    def asked(self) -> str:
        """The key of what was asked (question, options, gold): results are only reused for the same one."""
        return asked_key(self.question.text, self.question.options, self.answer)

    @property
    def key(self) -> tuple[str, str, str]:
        return self.dataset, self.qid, self.asked


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}
    return names.get(type(value), "a number" if isinstance(value, int | float) else type(value).__name__)


def _preview(value: Any, most: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= most else text[: most - 1] + "…"


def parse_json(data: bytes, name: str) -> Any:
    """JSON from a file's bytes, gzip-compressed or not (told apart by the gzip magic number, not the name)."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise BenchmarkError(f"{name} is not a readable gzip file: {exc}") from exc
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BenchmarkError(f"{name} is not UTF-8 text (an invalid byte at offset {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise BenchmarkError(
            f"{name} is not readable JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from exc


def _read(path: Path | str) -> Any:
    path = Path(path)
    if path.is_dir():
        raise BenchmarkError(f"{path} is a folder, not a file: name the .json or .json.gz file inside it")
    if not path.is_file():
        raise BenchmarkError(f"{path} does not exist")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BenchmarkError(f"{path} cannot be read: {exc.strerror or exc}") from exc
    return parse_json(data, str(path))


def check_benchmark(data: Any, name: str) -> dict[str, dict[str, Any]]:
    """The benchmark's shape, down to each dataset; entries are checked when they are selected."""
    if not isinstance(data, dict) or not data:
        found = "an empty object" if data == {} else _kind(data)
        raise BenchmarkError(f"{name} is not a MIRAGE-format benchmark: expected {SHAPE}, found {found}")
    for dataset, entries in data.items():
        if isinstance(entries, list):
            raise BenchmarkError(
                f"{name}: dataset {dataset!r} is a list of ids, not {{question_id: entry}}: "
                "this looks like an ids file (it goes with --ids), not a benchmark"
            )
        if not isinstance(entries, dict):
            raise BenchmarkError(
                f"{name}: dataset {dataset!r} should map question ids to entries ({SHAPE}), found {_kind(entries)}"
            )
    return data


def check_ids(data: Any, name: str) -> dict[str, list[str]]:
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        hint = (
            ": this looks like a benchmark file, not an ids file"
            if isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values())
            else ""
        )
        raise BenchmarkError(f"{name} should map each dataset to a list of question ids{hint}")
    for dataset, qids in data.items():
        bad = [q for q in qids if not isinstance(q, str | int) or isinstance(q, bool)]
        if bad:
            raise BenchmarkError(
                f"{name}: dataset {dataset!r}: question ids are strings, found {_kind(bad[0])} {_preview(bad[0])}"
            )
    return {dataset: list(dict.fromkeys(str(q) for q in qids)) for dataset, qids in data.items()}


def load_benchmark(path: Path | str) -> dict[str, dict[str, Any]]:
    return check_benchmark(_read(path), str(path))


def load_ids(path: Path | str) -> dict[str, list[str]]:
    return check_ids(_read(path), str(path))


def _item(dataset: str, qid: str, raw: Any) -> BenchItem:
    where = f"{dataset}/{qid}"
    if not isinstance(raw, dict) or not {"question", "options", "answer"} <= raw.keys():
        found = f"keys {', '.join(map(repr, raw))}" if isinstance(raw, dict) else _kind(raw)
        raise BenchmarkError(f"{where}: an entry needs 'question', 'options' and 'answer' (found {found})")
    if not isinstance(raw["options"], dict):
        raise BenchmarkError(f"{where}: 'options' should map letters to texts, found {_kind(raw['options'])}")
    if not isinstance(raw["question"], str):
        raise BenchmarkError(f"{where}: 'question' should be text, found {_kind(raw['question'])}")
    try:
        question = Question(text=raw["question"], options=raw["options"])
    except ValidationError as exc:
        raise BenchmarkError(f"{where}: {'; '.join(e['msg'] for e in exc.errors())}") from exc
    answer = raw["answer"]
    if not isinstance(answer, str):
        raise BenchmarkError(
            f"{where}: the answer should be one option letter, found {_kind(answer)} {_preview(answer)}"
        )
    if answer not in question.options:
        raise BenchmarkError(f"{where}: the answer {answer!r} is not one of the options {list(question.options)}")
    return BenchItem(dataset, qid, question, answer)


def _order(qids: list[str], dataset: str, sample: int | None, seed: int) -> list[str]:
    """A seeded shuffle (per dataset) cut to ``sample``: a larger sample with the same seed extends a smaller one."""
    if sample is None:
        return qids
    shuffled = list(qids)
    random.Random(f"{seed}:{dataset}").shuffle(shuffled)
    return shuffled[:sample]


def select(
    bench: dict[str, dict[str, Any]],
    ids: dict[str, list[str]] | None = None,
    datasets: list[str] | None = None,
    limit: int | None = None,
    *,
    sample: int | None = None,
    seed: int = 0,
) -> list[BenchItem]:
    """The questions to run: the ids file's (or every) question of each chosen dataset, or a seeded ``sample`` of
    them, then the first ``limit`` of each. Every unusable entry is named, not just the first."""
    source = ids if ids is not None else {name: list(entries) for name, entries in bench.items()}
    lacking = [d for d in (datasets or source) if d in source and d not in bench]
    if lacking:
        raise BenchmarkError(
            f"the ids file names dataset(s) {', '.join(lacking)} that the benchmark lacks; "
            f"the benchmark has: {', '.join(bench)}"
        )
    chosen = datasets or list(source)
    unknown = [d for d in chosen if d not in source]
    if unknown:
        where = "the ids file has" if ids is not None else "the benchmark has"
        raise BenchmarkError(f"unknown dataset(s) {', '.join(unknown)}; {where}: {', '.join(source)}")
    items, problems = [], []
    for dataset in chosen:
        qids = _order(source[dataset], dataset, sample, seed)
        qids = qids[:limit] if limit else qids
        missing = [q for q in qids if q not in bench[dataset]]
        if missing:
            shown = ", ".join(repr(q) for q in missing[:5]) + (", …" if len(missing) > 5 else "")
            problems.append(f"{dataset}: {len(missing)} id(s) are not in the benchmark: {shown}")
        for qid in qids:
            if qid in bench[dataset]:
                try:
                    items.append(_item(dataset, qid, bench[dataset][qid]))
                except BenchmarkError as exc:
                    problems.append(str(exc))
    if problems:
        more = len(problems) - SHOWN_PROBLEMS
        raise BenchmarkError("\n".join(problems[:SHOWN_PROBLEMS] + ([f"… and {more} more"] if more > 0 else [])))
    return items
