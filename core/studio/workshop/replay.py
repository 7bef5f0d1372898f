"""Replay: a saved run's events shown step by step, or two or three runs of one question stepping together,
aligned by stage. No model is involved; everything comes from the events.

Step 0 shows the question alone, so people can predict before anything happens. Each later step shows one more
event (for several runs: one more event of every run that still has one in the current stage, and runs wait for
each other where a stage ends). The last step is the reveal: the call that produced the answer and the answer
itself, so the answer is never on screen before it. Steps carry the original pacing (seconds between events),
so autoplay can replay a run at its real speed or faster.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.engine.methods import registry
from core.engine.stages import COMMON, Stage, common_stage
from core.engine.trace import AgentMessage, Answer, Event, Hit, Retrieval, Run

PHASES: tuple[str, ...] = tuple(COMMON.values())  # the stages every method shares, in order
_ORDER = {key: i for i, key in enumerate(COMMON)}


def phase_of(event: Event, stages: tuple[Stage, ...] = ()) -> int:
    """Which of ``PHASES`` an event belongs to: its common stage, by its method's stage list."""
    return _ORDER[common_stage(stages, event)]


def reveal_index(run: Run) -> int:
    """How many events come before the reveal: all but the call that produced the answer and the answer."""
    events = run.events
    answer_at = next((i for i in range(len(events) - 1, -1, -1) if isinstance(events[i].payload, Answer)), None)
    if answer_at is None:  # no answer (an error, a cut-off run): the reveal is its last event
        return max(len(events) - 1, 0)
    last_call = next((i for i in range(answer_at - 1, -1, -1) if isinstance(events[i].payload, AgentMessage)), None)
    return answer_at if last_call is None else last_call


def phases(run: Run) -> list[int]:
    """Each event's phase, never going back (a later loop of queries stays in the stage the run had reached), so
    stages of several runs line up in one order."""
    spec = registry().get(run.method)
    stages = spec.stages if spec else ()
    out, reached = [], 0
    for event in run.events:
        reached = max(reached, phase_of(event, stages))
        out.append(reached)
    return out


@dataclass(frozen=True)
class Step:
    shown: tuple[int, ...]  # events shown of each run
    label: str  # what this step is: a stage (one run) or a phase (several)
    delay: float  # seconds before this step at the original pacing
    reveal: bool = False


def _gaps(run: Run) -> list[float]:
    """Seconds before each event: from the previous event, the first from the run's start."""
    times = [run.started] + [e.time for e in run.events]
    return [max(0.0, b - a) for a, b in zip(times, times[1:])]


class Replay:
    def __init__(self, runs: list[Run]):
        if not runs:
            raise ValueError("nothing to replay: choose a run")
        self.runs = runs
        self.cuts = [reveal_index(r) for r in runs]
        self._gaps = [_gaps(r) for r in runs]
        self.steps = self._build()

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def last(self) -> int:
        return len(self.steps) - 1

    def _delay(self, before: tuple[int, ...], after: tuple[int, ...]) -> float:
        return max((sum(g[a:b]) for g, a, b in zip(self._gaps, before, after)), default=0.0)

    def _build(self) -> list[Step]:
        start = tuple(0 for _ in self.runs)
        steps = [Step(start, "the question", 0.0)]
        if len(self.runs) == 1:
            run, cut = self.runs[0], self.cuts[0]
            for n in range(1, cut + 1):
                steps.append(Step((n,), run.events[n - 1].stage, self._delay((n - 1,), (n,))))
        else:
            run_phases = [phases(r)[:cut] for r, cut in zip(self.runs, self.cuts)]
            for phase, name in enumerate(PHASES):
                counts = [p.count(phase) for p in run_phases]
                before = [sum(1 for x in p if x < phase) for p in run_phases]
                for offset in range(1, max(counts) + 1):
                    shown = tuple(b + min(offset, c) for b, c in zip(before, counts))
                    steps.append(Step(shown, name, self._delay(steps[-1].shown, shown)))
        final = tuple(len(r.events) for r in self.runs)
        steps.append(Step(final, "the answer", self._delay(steps[-1].shown, final), reveal=True))
        return steps

    def events(self, step: int, run: int = 0) -> list[Event]:
        return self.runs[run].events[: self.steps[self._clamp(step)].shown[run]]

    def _clamp(self, step: int) -> int:
        return max(0, min(step, self.last))

    def stage_starts(self) -> list[tuple[str, int]]:
        """(label, first step) for each stage in order: the 'jump to stage' list."""
        starts: dict[str, int] = {}
        for i, step in enumerate(self.steps):
            starts.setdefault(step.label, i)
        return list(starts.items())

    def new_events(self, step: int) -> list[tuple[int, Event]]:
        """(run index, event) that appear at this step."""
        step = self._clamp(step)
        before = self.steps[step - 1].shown if step else tuple(0 for _ in self.runs)
        return [
            (i, e) for i, (a, b) in enumerate(zip(before, self.steps[step].shown)) for e in self.runs[i].events[a:b]
        ]

    def step_of(self, run: int, seq: int) -> int:
        """The first step that shows event ``seq`` of run ``run``."""
        return next(i for i, step in enumerate(self.steps) if step.shown[run] > seq)

    def hits_shown(self, step: int, top: int = 5) -> list[Hit]:
        """The best ``top`` snippets of each retrieval shown so far (first appearance), for trust votes."""
        seen: dict[str, Hit] = {}
        for run in range(len(self.runs)):
            for event in self.events(step, run):
                if isinstance(event.payload, Retrieval):
                    for hit in event.payload.hits[:top]:
                        seen.setdefault(hit.snippet_id, hit)
        return list(seen.values())
