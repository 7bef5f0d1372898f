"""Corpora in the MedRAG chunk format: one JSON object a line with ``id, title, content, contents``.

A corpus is a ``.jsonl``/``.jsonl.gz`` file or a folder of them (searched recursively). A folder may
hold a ``corpus.json`` with its name and metadata (description, licence, attribution). Every line
that cannot be used is reported with its file and line number: strict loading stops at the first,
lenient loading skips it and lists it. Ids are unique within a corpus: in lenient loading a line
that repeats an earlier one exactly is skipped, and a different snippet under a used id is kept as
``<id>~2`` (``~3``, ...); both are reported. Strict loading stops at a repeated id.
"""

from __future__ import annotations

import gzip
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from core.engine.retrieval.progress import Progress, no_progress

SUFFIXES = (".jsonl", ".jsonl.gz")
METADATA_FILE = "corpus.json"
# MedRAG's downloadable corpora keep their chunks in <corpus>/chunk/*.jsonl.
_GENERIC_FOLDERS = {"chunk", "chunks"}


class CorpusError(ValueError):
    """A corpus that cannot be used as given; the message says which file and line."""


@dataclass(frozen=True)
class Snippet:
    id: str
    title: str
    text: str

    @property
    def contents(self) -> str:
        """What is indexed: title and text, as MedRAG's ``contents`` field."""
        return f"{self.title}. {self.text}" if self.title else self.text


@dataclass(frozen=True)
class LineProblem:
    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


@dataclass
class LoadReport:
    snippets: int = 0
    skipped: list[LineProblem] = field(default_factory=list)
    renamed: list[LineProblem] = field(default_factory=list)  # repeated ids kept under a new id
    split: int = 0  # long passages indexed as several chunks (``core.engine.retrieval.chunking``)

    def summary(self) -> str:
        parts = [f"{self.snippets} snippets"]
        if self.split:
            parts.append(f"{self.split} long passage{'s' * (self.split != 1)} split into chunks")
        for problems, what in ((self.skipped, "lines skipped"), (self.renamed, "repeated ids renamed")):
            if problems:
                where = "; ".join(str(p) for p in problems[:3]) + ("; ..." if len(problems) > 3 else "")
                parts.append(f"{len(problems)} {what} ({where})")
        return ", ".join(parts)


def _is_corpus_file(path: Path) -> bool:
    return path.is_file() and path.name.endswith(SUFFIXES)


def _stem(path: Path) -> str:
    return next(path.name[: -len(s)] for s in SUFFIXES if path.name.endswith(s))


@dataclass(frozen=True)
class CorpusSource:
    """Where a corpus lives: its name (tagged on every hit), its files and optional metadata."""

    name: str
    path: Path
    files: tuple[Path, ...]
    meta: dict = field(default_factory=dict, hash=False, compare=False)

    @classmethod
    def from_path(cls, path: str | Path) -> CorpusSource:
        path = Path(path).expanduser().resolve()
        if _is_corpus_file(path):
            return cls(_stem(path), path, (path,))
        if not path.is_dir():
            raise CorpusError(f"{path}: no such corpus file or folder (expected .jsonl, .jsonl.gz or a folder of them)")
        files = tuple(sorted(p for p in path.rglob("*") if _is_corpus_file(p)))
        if not files:
            raise CorpusError(f"{path}: the folder holds no .jsonl or .jsonl.gz files")
        meta = {}
        if (path / METADATA_FILE).is_file():
            meta = _metadata(path / METADATA_FILE)
        default_name = path.parent.name if path.name in _GENERIC_FOLDERS else path.name
        return cls(str(meta.get("name") or default_name), path, files, meta)

    @property
    def size_bytes(self) -> int:
        return sum(f.stat().st_size for f in self.files)


def _metadata(path: Path) -> dict:
    try:
        meta = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CorpusError(
            f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
        ) from None
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(meta, dict):
        raise CorpusError(
            f'{path}: expected a JSON object such as {{"name": "my-corpus"}}, got a {type(meta).__name__}'
        )
    return meta


def corpus_sources(paths: list[str | Path]) -> list[CorpusSource]:
    """One source per path; two corpora may not share a name, since hits are tagged by it."""
    sources = [CorpusSource.from_path(p) for p in paths]
    seen: dict[str, Path] = {}
    for source in sources:
        if source.name in seen and seen[source.name] != source.path:
            raise CorpusError(
                f"two corpora are both named {source.name!r}: {seen[source.name]} and {source.path}; "
                f'rename one (or give its folder a {METADATA_FILE} with a "name")'
            )
        seen[source.name] = source.path
    return list({s.path: s for s in sources}.values())


def _open_lines(path: Path) -> tuple[io.BufferedReader, Iterator[bytes]]:
    """The raw file (whose position tells progress in bytes) and its lines, undecoded: each line is decoded on
    its own, so a byte that is not UTF-8 spoils that line only."""
    raw = open(path, "rb")  # noqa: SIM115 - closed by the caller
    return raw, gzip.GzipFile(fileobj=raw) if path.name.endswith(".gz") else raw


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at column {exc.start + 1})") from None


def _text_field(record: dict, key: str) -> str:
    value = record.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{key!r} is a {type(value).__name__}, not a string")
    return value.strip()


def parse_line(line: str) -> Snippet:
    """One chunk-format line as a snippet; ValueError says what is wrong with it."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, got a {type(record).__name__}")
    snippet_id = record.get("id")
    if isinstance(snippet_id, int) and not isinstance(snippet_id, bool):
        snippet_id = str(snippet_id)
    if not isinstance(snippet_id, str) or not snippet_id.strip():
        raise ValueError('no "id" (a non-empty string)')
    title = _text_field(record, "title")
    text = _text_field(record, "content")
    if not text:
        contents = _text_field(record, "contents")
        text = contents[len(title) + 2 :] if title and contents.startswith(f"{title}. ") else contents
    if not text:
        raise ValueError('no text in "content" or "contents"')
    return Snippet(snippet_id.strip(), title, re.sub(r"\s+", " ", text))


def _renamed(snippet: Snippet, seen: dict) -> Snippet:
    n = 2
    while f"{snippet.id}~{n}" in seen:
        n += 1
    return Snippet(f"{snippet.id}~{n}", snippet.title, snippet.text)


def read_corpus(
    source: CorpusSource, *, strict: bool = False, progress: Progress = no_progress
) -> tuple[list[Snippet], LoadReport]:
    """Every usable snippet of a corpus, in file order, with the lines that were not usable."""
    report = LoadReport()
    snippets = list(iter_corpus(source, report, strict=strict, progress=progress))
    if not snippets:
        raise CorpusError(f"{source.path}: no usable snippets" + (f" ({report.summary()})" if report.skipped else ""))
    report.snippets = len(snippets)
    return snippets, report


def iter_corpus(
    source: CorpusSource, report: LoadReport, *, strict: bool = False, progress: Progress = no_progress
) -> Iterator[Snippet]:
    """The usable snippets of a corpus one at a time, in file order; each unusable line goes into ``report`` (or,
    when strict, stops the reading). What it remembers of the snippets read is their ids and a hash of their text."""
    seen: dict[str, tuple[int, int, int]] = {}  # id -> (file, line, hash of title and text) where first seen
    total, done_before = source.size_bytes, 0
    stage = f"read {source.name}"
    for file, path in enumerate(source.files):
        raw, lines = _open_lines(path)
        with raw, lines:
            number = 0
            try:
                for number, line in enumerate(lines, start=1):
                    if not line.strip():
                        continue
                    try:
                        snippet = parse_line(_decode(line))
                        if snippet.id in seen:
                            first_file, first_line, first = seen[snippet.id]
                            where = f"{source.files[first_file].name}:{first_line}"
                            same = first == hash((snippet.title, snippet.text))
                            if strict or same:
                                raise ValueError(
                                    f"repeats id {snippet.id!r} of {where}"
                                    + (" exactly" if same else " with other text")
                                )
                            original, snippet = snippet.id, _renamed(snippet, seen)
                            report.renamed.append(
                                LineProblem(
                                    str(path),
                                    number,
                                    f"id {original!r} is used at {where}; this snippet is kept as {snippet.id!r}",
                                )
                            )
                    except ValueError as exc:
                        problem = LineProblem(str(path), number, str(exc))
                        if strict:
                            raise CorpusError(f"{problem} (lenient loading would skip this line)") from None
                        report.skipped.append(problem)
                        continue
                    seen[snippet.id] = (file, number, hash((snippet.title, snippet.text)))
                    yield snippet
                    if number % 2000 == 0:
                        progress(stage, done_before + raw.tell(), total)
            except (OSError, EOFError) as exc:
                raise CorpusError(f"{path}:{number + 1}: cannot read the file ({exc})") from exc
        done_before += path.stat().st_size
        progress(stage, done_before, total)


def count_lines(source: CorpusSource) -> int:
    """Non-blank lines, a quick size for a corpus that is not indexed yet."""
    count = 0
    for path in source.files:
        raw, lines = _open_lines(path)
        with raw, lines:
            count += sum(1 for line in lines if line.strip())
    return count
