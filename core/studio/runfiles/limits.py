"""What a run in a file may hold, checked before anything is imported: a run id that is safe in a path and a URL,
a question within the limits Ask enforces on a typed question, a start time that is not in the future, and every
other text within a bound. A problem is refused by its place (run, event, field), like the schema's."""

from __future__ import annotations

import re
import time
from typing import Any

from pydantic import ValidationError

from core.engine.question import Question
from core.engine.trace import Run
from core.studio.runfiles.format import RunFile, RunFileError

RUN_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_TEXT_CHARS = 100_000  # any one text: a snippet, an agent's reply, a knob value (replies are far shorter)
FUTURE_SLACK_SECONDS = 300.0  # clocks of two machines disagree by this much at most
SHOWN_CHARS = 40


def shown(value: str) -> str:
    """A value from a file as it may appear in a message: escaped and cut short."""
    text = ascii(value)
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}… ({len(value):,} characters)"


def check_run_id(value: str, what: str = "run id") -> None:
    if not RUN_ID.fullmatch(value):
        raise RunFileError(f"{what} {shown(value)} is not one: a run id is 1 to 64 letters, digits, '-' or '_'")


def _texts(value: Any, path: str) -> Any:
    """(place, text) for every string in decoded JSON, keys included."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _texts(key, f"{path or 'the run'} (the key {shown(key)})")
            yield from _texts(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _texts(item, f"{path}.{index}")


def _check_text(place: str, text: str) -> None:
    if len(text) > MAX_TEXT_CHARS:
        raise RunFileError(
            f"{place} is {len(text):,} characters long; a text in a run may be at most {MAX_TEXT_CHARS:,}"
        )
    if "\x00" in text:
        raise RunFileError(f"{place} holds a NUL character")
    if any("\ud800" <= c <= "\udfff" for c in text):
        raise RunFileError(f"{place} holds characters that are not valid UTF-8")


def check_run(run: Run, now: float) -> None:
    check_run_id(run.id, "the run id")
    where = f"run {run.id}"
    if run.parent_id is not None:
        check_run_id(run.parent_id, f"{where}: its parent run id")
    try:
        Question(text=run.question, options=run.options)
    except ValidationError as exc:
        problems = "; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())
        raise RunFileError(f"{where}, field question: {problems}") from None
    if run.started > now + FUTURE_SLACK_SECONDS:
        raise RunFileError(
            f"{where} starts at {time.strftime('%Y-%m-%d %H:%M', time.localtime(run.started))}, "
            "in the future (the exporting machine's clock is wrong, or the file was edited)"
        )
    fields = run.model_dump(mode="json", exclude={"events"})
    for place, text in _texts(fields, ""):
        _check_text(f"{where}, field {place}", text)
    for event in run.events:
        for place, text in _texts(event.model_dump(mode="json"), ""):
            _check_text(f"{where}, event seq {event.seq}, field {place}", text)


def check_limits(run_file: RunFile, now: float | None = None) -> None:
    """Every run of a parsed file within the limits, or a ``RunFileError`` naming the first place that is not."""
    now = time.time() if now is None else now
    _check_text("the file's title", run_file.title)
    for entry in run_file.runs:
        check_run(entry.run, now)
        rest = entry.model_dump(mode="json", exclude={"run"})
        for place, text in _texts(rest, ""):
            _check_text(f"run {entry.run.id}, field {place}", text)
