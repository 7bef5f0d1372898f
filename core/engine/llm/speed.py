"""The embedded model's measured speed, per method: seconds a question takes on the shipped server, and the same
questions on the naive one (one slot, no prompt cache, calls in sequence). ``benchmarks/llm_bench.py`` measures it and
writes ``data/measured_speed.json`` (``MeasuredSpeed``); the studio reads it from there (the Settings page's table, a
benchmark's estimate of the time left before its first question ends), never the script's own results."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ValidationError

from core.engine.paths import REPO_ROOT

SPEED_FILE = REPO_ROOT / "data" / "measured_speed.json"


class ConfigSpeed(BaseModel):
    """One server configuration's means per question."""

    seconds: float
    prompt_evaluated: float  # prompt tokens the server read (those it found cached not counted)
    generated_per_s: float | None  # llama.cpp's own writing rate; None where no run reported one


class MethodSpeed(BaseModel):
    median_seconds: float | None  # the shipped server's, per question, over the runs that ended well
    naive: ConfigSpeed | None = None
    shipped: ConfigSpeed | None = None
    ratio: list[float] = []  # shipped / naive seconds, per question both ran
    ratio_equal_work: list[float] = []  # shipped seconds / the naive rates applied to the shipped run's tokens


class MeasuredSpeed(BaseModel):
    model: str
    measured_to: str  # when the latest run ended
    methods: dict[str, MethodSpeed]


@lru_cache(maxsize=1)
def measured(path: Path = SPEED_FILE) -> MeasuredSpeed | None:
    """The figures as last measured; None when the file is missing or not of this shape."""
    try:
        return MeasuredSpeed.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None
