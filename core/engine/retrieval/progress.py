"""Progress of long retrieval work as ``progress(stage, done, total)``: tqdm bars on the command line,
any callback in the UI."""

from __future__ import annotations

from collections.abc import Callable

from tqdm import tqdm

Progress = Callable[[str, int, int], None]

LOAD_STAGE = "load "  # stages named so open an index built before: seconds, where building takes minutes
BYTE_STAGES = ("read ", "download ")  # stages counted in bytes, not snippets


def is_load_stage(stage: str) -> bool:
    return stage.startswith(LOAD_STAGE)


def stage_line(stage: str, done: int, total: int) -> str:
    """One line for a progress bar: how far a build stage got; a load stage, which is one step, only by name."""
    if is_load_stage(stage):
        return stage
    return f"{stage}: {done:,} of {total:,}" + (f" ({done / total:.0%})" if total else "")


def no_progress(stage: str, done: int, total: int) -> None:
    return None


class TqdmProgress:
    """One tqdm bar per stage; a new stage closes the previous bar."""

    def __init__(self) -> None:
        self._stage: str | None = None
        self._bar: tqdm | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if is_load_stage(stage):  # seconds: a bar would only add a line to the output
            return
        if stage != self._stage:
            self.close()
            self._stage = stage
            bytes_stage = stage.startswith(BYTE_STAGES)
            self._bar = tqdm(
                total=total, desc=stage, unit="B" if bytes_stage else " snippets", unit_scale=bytes_stage, leave=True
            )
        assert self._bar is not None
        self._bar.update(done - self._bar.n)
        if done >= total:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        self._bar, self._stage = None, None


def as_progress(progress: bool | Progress | None) -> Progress:
    """``True`` means tqdm bars, a callable is used as is, ``False``/``None`` shows nothing."""
    if progress is True:
        return TqdmProgress()
    if callable(progress):
        return progress
    return no_progress
