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
MAX_DEPTH = 32  # lists and objects inside each other; a run file nests about ten (a hit inside an event's payload)
_SURROGATE = re.compile("[\ud800-\udfff]")
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
FUTURE_SLACK_SECONDS = 300.0  # clocks of two machines disagree by this much at most
SHOWN_CHARS = 40


def shown(value: str) -> str:
    """A value from a file as it may appear in a message: escaped and cut short."""
    text = ascii(value)
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}… ({len(value):,} characters)"


def check_run_id(value: str, what: str = "run id") -> None:
    if not RUN_ID.fullmatch(value):
        raise RunFileError(f"{what} {shown(value)} is not one: a run id is 1 to 64 letters, digits, '-' or '_'")


def _dotted(path: tuple[str | int, ...]) -> str:
    return ".".join(
        str(p) if isinstance(p, int) or (len(p) <= SHOWN_CHARS and p.isprintable()) else shown(p) for p in path
    )


def _at(value: Any, *path: str | int) -> Any:
    """The value at ``path`` in decoded JSON, or None where the file has no such place."""
    for step in path:
        fits = isinstance(value, dict) if isinstance(step, str) else isinstance(value, list) and step < len(value)
        if not fits:
            return None
        value = value.get(step) if isinstance(step, str) else value[step]
    return value


def _place(data: Any, path: tuple[str | int, ...]) -> str:
    """Where a value sits in the file, said as the rest of the checks say it: the run by its id (or its number when
    the id is not one), the event by its sequence number, then the field's path."""
    if path == ("title",):
        return "the file's title"
    if len(path) < 2 or path[0] != "runs" or not isinstance(path[1], int):
        return f"the file, field {_dotted(path)}"
    run_id = _at(data, *path[:2], "run", "id")
    where = f"run {run_id}" if isinstance(run_id, str) and RUN_ID.fullmatch(run_id) else f"run number {path[1] + 1}"
    rest = path[2:]
    if rest[:1] == ("run",):
        rest = rest[1:]
        if len(rest) >= 2 and rest[0] == "events" and isinstance(rest[1], int):
            seq = _at(data, *path[:4], rest[1], "seq")
            where += f", event seq {seq}" if isinstance(seq, int) else f", event number {rest[1] + 1}"
            rest = rest[2:]
    return f"{where}, field {_dotted(rest)}" if rest else where


def _problem(text: str) -> str | None:
    if len(text) > MAX_TEXT_CHARS:
        return f"is {len(text):,} characters long; a text in a run may be at most {MAX_TEXT_CHARS:,}"
    if "\x00" in text:
        return "holds a NUL character"
    if _SURROGATE.search(text):
        return "holds characters that are not valid UTF-8"
    return None


def too_deep(text: str) -> str:
    """What to say of JSON nested too deep for the decoder: where it first goes past ``MAX_DEPTH``. The scan stops
    there and reads strings whole (a bracket inside one is text)."""
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        if token[0] in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, token.start()) + 1
                column = token.start() - text.rfind("\n", 0, token.start())
                return (
                    f"the unpacked file nests lists and objects more than {MAX_DEPTH} deep, from line {line}, "
                    f"column {column}; a run file needs far fewer"
                )
        elif token[0] in "]}":
            depth -= 1
    return f"the unpacked file nests lists and objects too deep to read; a run file needs fewer than {MAX_DEPTH}"


def check_texts(data: Any) -> None:
    """Every text of a decoded file within the bounds, keys included, and nothing nested deeper than
    ``MAX_DEPTH``: checked before anything else reads the texts (masking, the schema), so an oversized text costs
    no more than its length check. The walk keeps its own stack, so no nesting can exhaust Python's. Run ids are
    checked first, so a bad one is refused as an id rather than as a text."""
    for index in range(len(runs) if isinstance(runs := _at(data, "runs"), list) else 0):
        if isinstance(run_id := _at(runs, index, "run", "id"), str):
            check_run_id(run_id, "the run id")
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_DEPTH:
            raise RunFileError(
                f"{_place(data, path[:MAX_DEPTH])} nests lists and objects more than {MAX_DEPTH} deep; "
                "a run file needs far fewer"
            )
        if isinstance(value, str):
            if problem := _problem(value):
                raise RunFileError(f"{_place(data, path)} {problem}")
        elif isinstance(value, dict):
            for key in value:
                if problem := _problem(key):
                    raise RunFileError(f"{_place(data, path)} (the key {shown(key)}) {problem}")
            stack.extend((value[key], (*path, key)) for key in reversed(value))  # popped in the file's order
        elif isinstance(value, list):
            stack.extend((value[i], (*path, i)) for i in reversed(range(len(value))))


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


def check_limits(run_file: RunFile, now: float | None = None) -> None:
    """Every run of a parsed file within the limits, or a ``RunFileError`` naming the first place that is not (its
    texts were checked on the decoded file, by ``check_texts``)."""
    now = time.time() if now is None else now
    for entry in run_file.runs:
        check_run(entry.run, now)
