"""The run file format: one JSON document, gzip-compressed, that carries runs with everything a screen draws.

A file holds one run, a selection or a comparison. Each run comes with every event (events hold the texts of
the snippets agents were shown, so nothing else is needed to replay it), its knobs, model, the backend that
answered and the corpora it searched with their index fingerprints. Checking is separate from parsing so
that a problem is named by its place: the format version, the run id, the event's sequence number, the field.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.engine.trace import Run

FORMAT = "medrag-studio-runs"
VERSION = 1
Kind = Literal["run", "selection", "comparison"]
MAX_ERRORS_SHOWN = 5


class RunFileError(ValueError):
    """A run file that cannot be used; the message says what is wrong and where."""


class CorpusRef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    fingerprint: str | None = None  # of the index searched; None when it was not recorded


class Origin(BaseModel):
    """Where an imported run came from: the file and when it was imported (and exported)."""

    model_config = ConfigDict(extra="forbid")

    source: str
    imported_at: float
    exported_at: float | None = None


class Variation(BaseModel):
    """What a what-if re-run changed against its parent run (``Run.parent_id``)."""

    model_config = ConfigDict(extra="forbid")

    drop: list[str] = Field(default_factory=list)  # snippet ids it never retrieved
    pin: list[str] = Field(default_factory=list)  # snippet ids forced into every retrieval

    def describe(self) -> str:
        parts = ([f"dropped {', '.join(self.drop)}"] if self.drop else []) + (
            [f"pinned {', '.join(self.pin)}"] if self.pin else []
        )
        return " and ".join(parts) or "no change"


class RunEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run: Run
    backend: str = ""  # the model and, for an endpoint, its URL (credentials masked)
    corpora: list[CorpusRef] = Field(default_factory=list)
    case_id: str | None = None  # the teaching-pack case the run answers, when it is one
    origin: Origin | None = None  # set when the exporting studio had itself imported the run
    variation: Variation | None = None  # for a what-if re-run: what it changed


class RunFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["medrag-studio-runs"] = FORMAT
    version: int = VERSION
    kind: Kind = "selection"
    title: str = ""
    exported_at: float = Field(default_factory=time.time)
    runs: list[RunEntry] = Field(min_length=1)

    def entry(self, run_id: str) -> RunEntry:
        return next(e for e in self.runs if e.run.id == run_id)


def parse(data: Any) -> RunFile:
    """A decoded JSON document as a checked ``RunFile``, or a ``RunFileError`` naming the first problems."""
    if not isinstance(data, dict):
        raise RunFileError(f"not a run file: the JSON document is a {type(data).__name__}, not an object")
    if data.get("format") != FORMAT:
        raise RunFileError(f'not a run file: its "format" field is {data.get("format")!r}, expected {FORMAT!r}')
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise RunFileError(f"format version {version!r} is not a whole number")
    if version > VERSION:
        raise RunFileError(
            f"format version {version} was written by a newer studio; this one reads version "
            f"{VERSION}. Update the studio to import it."
        )
    if version < 1:
        raise RunFileError(f"format version {version} does not exist; this studio reads version {VERSION}")
    try:
        checked = RunFile.model_validate(data)
    except ValidationError as exc:
        raise RunFileError(describe_errors(exc, data)) from None
    check_consistency(checked)
    return checked


def check_consistency(run_file: RunFile) -> None:
    """What the schema alone cannot say: ids unique, each event belongs to its run, no sequence number skipped."""
    seen: set[str] = set()
    for entry in run_file.runs:
        run = entry.run
        if run.id in seen:
            raise RunFileError(f"run {run.id} appears twice in the file")
        seen.add(run.id)
        for position, event in enumerate(run.events):
            if event.run_id != run.id:
                raise RunFileError(f"run {run.id}, event seq {event.seq}: it belongs to run {event.run_id}")
            if event.seq != position:
                problem = (
                    f"sequence number {position} is missing (the events go from {position - 1} to {event.seq})"
                    if event.seq > position
                    else f"sequence number {event.seq} comes again or out of order"
                )
                raise RunFileError(f"run {run.id}: the events skip a number: {problem}; the trace is incomplete")


def describe_errors(exc: ValidationError, data: dict[str, Any]) -> str:
    errors = exc.errors()
    lines = [
        _place(error["loc"], data) + ": " + error["msg"].removeprefix("Value error, ")
        for error in errors[:MAX_ERRORS_SHOWN]
    ]
    more = f" (and {len(errors) - MAX_ERRORS_SHOWN} more problems)" if len(errors) > MAX_ERRORS_SHOWN else ""
    return "; ".join(lines) + more


def _place(loc: tuple[Any, ...], data: dict[str, Any]) -> str:
    """('runs', 2, 'run', 'events', 5, 'payload', ...) as 'run <id>, event seq <n>, field payload...'."""
    parts, rest = [], list(loc)
    if rest[:1] == ["runs"] and len(rest) > 1 and isinstance(rest[1], int):
        index = rest[1]
        raw = _get(data, "runs", index)
        run_id = _get(raw, "run", "id")
        parts.append(f"run {run_id}" if isinstance(run_id, str) else f"run #{index + 1}")
        rest = rest[2:]
        if rest[:2] == ["run", "events"] and len(rest) > 2 and isinstance(rest[2], int):
            seq = _get(raw, "run", "events", rest[2], "seq")
            parts.append(f"event seq {seq}" if isinstance(seq, int) else f"event #{rest[2] + 1}")
            rest = rest[3:]
    if rest:
        parts.append("field " + ".".join(str(p) for p in rest))
    return ", ".join(parts) or "the file"


def _get(value: Any, *path: Any) -> Any:
    for step in path:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return None
    return value
