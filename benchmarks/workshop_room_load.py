"""Load on a live workshop room: N participants follow a presenter through a replay on one studio server.

    .venv/bin/python -m benchmarks.workshop_room_load [--participants 30] [--steps 20]

The real app is started (``streamlit run``) on a fresh state folder. Each participant is a client speaking
Streamlit's own websocket protocol, as a browser tab does: it opens the Workshop page with its room token in the
address, runs the page, re-runs any fragment the page asks to be re-run at an interval (``st.fragment(run_every=...)``:
the browser's ``setInterval``, which fires whether or not a run is still going), takes the runs the server starts
itself (a participant's page sets no timer: the server redraws its room part when the presenter moves), and lists the
large messages it already holds as the browser's cache does. The presenter moves the room one step at a time, writing
the step to the store as the presenter's page does, and waits ``--dwell`` seconds on each step.

Step-to-screen latency is the time from the presenter's step change to the moment a participant has received
the redrawn page for that step (its "Step N of M" line); the browser's own drawing is not included. Server CPU
is sampled from the server process. Errors are failed connections, exceptions shown on a page, and steps a
participant never saw within the timeout.

The replay: by default a synthetic run of ``--steps`` + 1 steps built from teaching-pack passages (one query,
a 16-snippet retrieval and an agent's reply per round, as the methods' traces have), so the benchmark needs no
model and no recorded pack; ``--case`` and ``--methods`` replay recorded pack runs instead.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from core.engine.trace import AgentMessage, Answer, Event, Hit, Query, Retrieval, Run, Usage
from core.studio.rooms import RoomStore
from core.studio.runfiles import RunEntry, RunFile, write
from core.studio.teaching import load_cases, load_passages
from core.studio.workshop.pack import load_pack
from core.studio.workshop.replay import Replay
from tests.e2e.serve import serve_app


def synthetic_run(steps: int) -> tuple[Run, str]:
    """A teaching-case run whose replay has ``steps`` + 1 steps (0 .. steps), with real passage texts."""
    case = next(c for c in load_cases() if c.id == "stemi")
    passages = load_passages()
    run = Run(method="sema", question=case.question, options=case.options, model="synthetic", corpus=["teaching_pack"])
    events: list = []
    clock = run.started
    for turn in range(steps):  # steps - 1 events before the reveal, then the final call and the answer
        clock += 2.0
        kind = turn % 3
        if kind == 0:
            payload = Query(text=f"follow-up query {turn} on {case.title}", purpose="follow-up", round=turn // 3 + 1)
        elif kind == 1:
            chosen = [passages[(turn * 7 + i) % len(passages)] for i in range(16)]
            payload = Retrieval(
                query=f"follow-up query {turn - 1}",
                round=turn // 3 + 1,
                hits=[
                    Hit(
                        snippet_id=p.id,
                        corpus="teaching_pack",
                        title=p.title,
                        text=p.content,
                        rank=i + 1,
                        score=1 / (i + 1),
                        scores={"bm25": 10 - i / 2, "dense": 0.8 - i / 50},
                    )
                    for i, p in enumerate(chosen)
                ],
            )
        else:
            payload = AgentMessage(
                role="explorer",
                text="Judging the evidence.",
                turn=turn // 3 + 1,
                data={
                    "sufficient": False,
                    "gaps": ["dose", "timing"],
                    "reasoning": "The retrieved passages cover the ECG but not reperfusion. " * 3,
                },
            )
        events.append((f"exploration turn {turn // 3 + 1}", "E-Agent", payload, Usage(calls=1, seconds=2.0)))
    events.append(
        (
            "answer selection",
            "A-Agent",
            AgentMessage(role="arbiter", text="B", data={"answer": "B"}),
            Usage(calls=1, seconds=2.0),
        )
    )
    events.append(
        ("final answer", "Answer", Answer(choice="B", text=case.options["B"], rationale="From the key."), Usage())
    )
    for seq, (stage, agent, payload, usage) in enumerate(events):
        clock += 0.5
        run.events.append(
            Event(run_id=run.id, seq=seq, stage=stage, agent=agent, payload=payload, usage=usage, time=clock)
        )
    run.answer, run.status, run.finished = run.events[-1].payload, "ok", clock
    run.totals = run.compute_totals()
    return run, case.id


CACHED_RUNS = 2  # Streamlit's global.maxCachedMessageAge: the browser keeps a large message this many runs


class Participant:
    """One browser tab, spoken as Streamlit's websocket protocol."""

    def __init__(self, url: str, query: str, deadline: float):
        self.url, self.query, self.deadline = url, query, deadline
        self.seen: dict[int, float] = {}  # step -> when its page arrived
        self.errors: list[str] = []
        self.timers: dict[str, tuple[float, float]] = {}  # fragment id -> (interval, when it fires next)
        # The browser's cache of large messages, whose hashes each rerun request lists so that the server sends a
        # reference instead: hash -> the whole-page run it last came in (kept for CACHED_RUNS runs).
        self.cached: dict[str, int] = {}
        self.page_runs = 0
        self.page_hash = ""
        self.stopped = False

    def _rerun(self, fragment_id: str = "") -> bytes:
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_name = "workshop"
        msg.rerun_script.page_script_hash = self.page_hash
        msg.rerun_script.cached_message_hashes.extend(self.cached)
        if fragment_id:
            msg.rerun_script.fragment_id = fragment_id
            msg.rerun_script.is_auto_rerun = True
        return msg.SerializeToString()

    async def run(self, steps: int) -> None:
        try:
            async with websockets.connect(self.url, subprotocols=["streamlit"], max_size=2**26) as ws:
                await ws.send(self._rerun())
                timer = asyncio.create_task(self._timer(ws))
                try:
                    while not self.stopped and time.time() < self.deadline:
                        try:
                            raw = await asyncio.wait_for(ws.recv(), timeout=1.0)
                        except TimeoutError:
                            continue
                        self._handle(raw, steps)
                finally:
                    timer.cancel()
        except Exception as exc:  # every failure is counted and reported, never hidden
            self.errors.append(f"{type(exc).__name__}: {exc}")

    def _handle(self, raw: bytes, steps: int) -> None:
        now = time.time()
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        kind = msg.WhichOneof("type")
        if msg.metadata.cacheable or kind == "ref_hash":
            self.cached[msg.ref_hash if kind == "ref_hash" else msg.hash] = self.page_runs
        if kind == "script_finished" and msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
            self.page_runs += 1
            self.cached = {h: run for h, run in self.cached.items() if self.page_runs - run <= CACHED_RUNS}
        elif kind == "new_session" and not msg.metadata.run.fragment_ids:
            self.timers.clear()  # a whole-page run: as in the browser, only the fragments it registers go on
        elif kind == "navigation" and msg.navigation.page_script_hash:
            self.page_hash = msg.navigation.page_script_hash
        elif kind == "auto_rerun":
            fragment_id, interval = msg.auto_rerun.fragment_id, msg.auto_rerun.interval
            if self.timers.get(fragment_id, (None, 0.0))[0] != interval:  # the browser keeps a timer it has
                self.timers[fragment_id] = (interval, now + interval)
        elif kind == "stop_auto_rerun":
            for fragment_id in msg.stop_auto_rerun.fragment_ids:
                self.timers.pop(fragment_id, None)
        elif kind == "delta":
            element = msg.delta.new_element
            if element.WhichOneof("type") == "exception":
                self.errors.append(f"exception on the page: {element.exception.message}")
            if element.WhichOneof("type") == "progress":
                text = element.progress.text
                for step in range(steps + 1):
                    if text.startswith(f"Step {step} of ") and step not in self.seen:
                        self.seen[step] = now

    async def _timer(self, ws) -> None:
        """The browser's ``setInterval`` for each fragment with run_every: a re-run every interval, idle or not."""
        while True:
            await asyncio.sleep(0.05)
            now = time.time()
            for fragment_id, (interval, due) in list(self.timers.items()):
                if now >= due:
                    self.timers[fragment_id] = (interval, due + interval if due + interval > now else now + interval)
                    await ws.send(self._rerun(fragment_id))


def _niced(tid: int) -> bool:
    """Whether a server thread runs behind the pages: the embedded model's do (``core/engine/llm/embedded.py``)."""
    try:
        return os.getpriority(os.PRIO_PROCESS, tid) > 0
    except OSError:
        return False


class CpuSampler(threading.Thread):
    """The server's CPU while the presenter steps: in percent of one core every half second, and in seconds split
    between the embedded model's threads (which take whatever the pages leave, so they say nothing about a room's
    cost) and the rest: the pages, their sessions and the store."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.process = psutil.Process(pid)
        self.samples: list[float] = []
        self.seconds = {"server": 0.0, "model": 0.0}
        self.stop = threading.Event()
        self._model: dict[int, float] = {}  # the model's thread -> its CPU seconds at the last sample

    def _sample(self) -> tuple[float, float]:
        """(the process's CPU seconds, its model threads' CPU seconds since the last sample)."""
        times = self.process.cpu_times()
        model = 0.0
        for thread in self.process.threads():
            if thread.id in self._model or _niced(thread.id):
                used = thread.user_time + thread.system_time
                model += used - self._model.get(thread.id, used)
                self._model[thread.id] = used
        return times.user + times.system, model

    def run(self) -> None:
        self.process.cpu_percent(None)
        total, _ = self._sample()
        stopped = False
        while not stopped:
            stopped = self.stop.wait(0.5)
            self.samples.append(self.process.cpu_percent(None))
            now, model = self._sample()
            self.seconds["server"] += now - total
            self.seconds["model"] += model
            total = now

    def ms_per(self, participant_steps: int) -> dict[str, float]:
        """The server's CPU milliseconds per participant-step, with the model's threads and without them."""
        return {
            "server": round(1000 * self.seconds["server"] / max(participant_steps, 1), 1),
            "without_model": round(
                1000 * (self.seconds["server"] - self.seconds["model"]) / max(participant_steps, 1), 1
            ),
        }


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def room_arguments(doc: str, participants: int) -> argparse.ArgumentParser:
    """The options both room benchmarks take: who joins, and the presenter's pace."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--participants", type=int, default=participants)
    parser.add_argument("--steps", type=int, default=20, help="steps the presenter moves forward")
    parser.add_argument("--dwell", type=float, default=3.0, help="seconds the presenter stays on each step")
    parser.add_argument("--timeout", type=float, default=15.0, help="a step not seen within this is an error")
    return parser


def main() -> int:
    parser = room_arguments(__doc__, participants=30)
    parser.add_argument("--case", help="replay recorded pack runs of this teaching case instead of a synthetic run")
    parser.add_argument("--methods", default="", help="with --case: comma-separated methods (default: all)")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="workshop-load-"))
    folder = home / "pack"
    if args.case:
        recorded = {p.case.id: p for p in load_pack()[0]}
        if args.case not in recorded:
            print(f"error: the pack has no case {args.case}", file=sys.stderr)
            return 2
        chosen = [e for m, e in recorded[args.case].runs.items() if not args.methods or m in args.methods.split(",")]
        case_id = args.case
    else:
        run, case_id = synthetic_run(args.steps)
        chosen = [RunEntry(run=run, backend="synthetic", case_id=case_id)]
    write(RunFile(kind="comparison", runs=chosen), folder / f"{case_id}.json.gz")
    replay = Replay([e.run for e in chosen])
    steps = min(args.steps, replay.last)

    with serve_app(home, {"MEDRAG_WORKSHOP_PACK": str(folder)}) as (url, server):
        rooms = RoomStore(home / "studio.sqlite")
        room, presenter = rooms.open_room(
            title="load test", source="pack", run_ids=[e.run.id for e in chosen], steps=len(replay), case_id=case_id
        )
        tokens = [rooms.join(room.code, f"participant {i + 1}")[1] for i in range(args.participants)]
        print(
            f"{args.participants} participants, {steps} steps of a {len(replay)}-step replay "
            f"({', '.join(e.run.method for e in chosen)}), dwell {args.dwell:.1f} s, room {room.code}"
        )
        stream = url.replace("http://", "ws://") + "/_stcore/stream"
        latencies, errors, sampler = asyncio.run(
            _drive(args, stream, room.code, presenter, tokens, rooms, steps, server.pid)
        )
    _report(latencies, errors, sampler, args.participants * steps)
    return 0 if not errors else 1


async def _drive(args, url, code, presenter, tokens, rooms, steps, pid):
    deadline = time.time() + 120 + steps * (args.dwell + args.timeout)
    people = [Participant(url, f"room={code}&member={token}", deadline) for token in tokens]
    tasks = [asyncio.create_task(p.run(steps)) for p in people]
    started = time.time()
    while time.time() - started < 120 and not all(0 in p.seen for p in people):
        await asyncio.sleep(0.2)
    print(
        f"all on step 0 after {time.time() - started:.1f} s"
        if all(0 in p.seen for p in people)
        else f"only {sum(0 in p.seen for p in people)} participants reached step 0"
    )
    sampler = CpuSampler(pid)
    sampler.start()
    latencies: list[float] = []
    errors: list[str] = []
    for step in range(1, steps + 1):
        moved = time.time()
        await asyncio.to_thread(rooms.set_step, code, presenter, step)
        while time.time() - moved < args.timeout and not all(step in p.seen for p in people):
            await asyncio.sleep(0.05)
        for i, p in enumerate(people):
            if step in p.seen:
                latencies.append(p.seen[step] - moved)
            else:
                errors.append(f"participant {i + 1} never saw step {step}")
        await asyncio.sleep(max(0.0, args.dwell - (time.time() - moved)))
    sampler.stop.set()
    sampler.join()
    for p in people:
        p.stopped = True
    await asyncio.gather(*tasks)
    errors += [f"participant {i + 1}: {e}" for i, p in enumerate(people) for e in p.errors]
    return latencies, errors, sampler


def _report(latencies: list[float], errors: list[str], sampler: CpuSampler, expected: int) -> None:
    if latencies:
        print(
            f"step-to-screen latency over {len(latencies)} of {expected} participant-steps: "
            f"p50 {statistics.median(latencies):.2f} s, p95 {percentile(latencies, 95):.2f} s, "
            f"max {max(latencies):.2f} s"
        )
    if cpu := sampler.samples:
        print(
            f"server CPU (100% = one core of {psutil.cpu_count()}): mean {statistics.mean(cpu):.0f}%, "
            f"p95 {percentile(cpu, 95):.0f}%, peak {max(cpu):.0f}% over {len(cpu) / 2:.0f} s; "
            f"{sampler.ms_per(expected)['server']:.0f} ms per participant-step"
        )
    print(f"errors: {len(errors)}")
    for error in errors[:10]:
        print(f"  {error}")


if __name__ == "__main__":
    sys.exit(main())
