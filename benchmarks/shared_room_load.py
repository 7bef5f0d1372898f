"""Load on a shared studio with roles: participants follow a live room while two visitors label snippets and the
signed-in owner keeps one live run on the embedded model going, all on one server.

    .venv/bin/python -m benchmarks.shared_room_load [--participants 60] [--steps 20] [--dwell 3.0]

The real app is started (``streamlit run``) in shared mode (on 127.0.0.1 with ``MEDRAG_MODE=shared``, as ``make
serve`` runs it on the network) on a fresh state folder, with the response cache off so every run really runs the
model. Participants are the websocket clients of ``benchmarks.workshop_room_load`` (each a browser tab following the
room, visitors with their own member tokens). The owner and the two annotators are real browsers (headless chromium,
one process of its own): the owner signs in with the passcode, starts a CoT run from a teaching case on Ask, and
starts the next (Ask again, Run) as soon as one ends; each annotator types a name on Annotate and grades the passage
shown, as a careful person does: a real click on a grade other than the one it has, then waiting for the page to say
it saved that grade for that passage before the next. The presenter moves the room one step every ``--dwell`` seconds
once the owner's first run is going (the model loaded).

Figures: step-to-screen latency for participants (p50, p95, max; target p95 under 3 s), label saves lost (a grade the
annotator's page said it saved that the database does not hold at the end; target 0), errors (failed connections,
exceptions on a page, steps never seen, grades the page never said it saved, label errors shown; target 0), the
owner's runs finished, and CPU: the server's, the benchmark's own (its clients and browsers) and everything else on
the machine (others' work: the figures hold for an otherwise idle machine only when that is near 0).
Results go to ``benchmarks/results/shared_room_load.json``; ``python -m tools.docs`` draws them into
docs/results/shared_room_load.md and docs/serving.md.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import platform
import re
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import psutil

from benchmarks.workshop_room_load import _drive, percentile, room_arguments, synthetic_run
from core.engine.settings import usable_cores
from core.engine.store import RunStore
from core.studio.labels import GRADES
from core.studio.rooms import RoomStore
from core.studio.runfiles import RunEntry, RunFile, import_runs, write
from core.studio.workshop.replay import Replay
from tests.e2e.serve import serve_app

PASSCODE = "load-test-passcode"
CASE = "Cardiology · Acute inferior ST-elevation myocardial infarction"
RESULTS = Path(__file__).resolve().parent / "results" / "shared_room_load.json"
# the same command's figures before a change the results are compared with (``--out`` this file to record them)
BEFORE = RESULTS.with_name("shared_room_load_before.json")
# the same, sixty participants on one core (``taskset -c 0``, ``--out`` these files): a machine half as fast
ONE_CORE, ONE_CORE_BEFORE = (RESULTS.with_name(f"shared_room_load_one_core{s}.json") for s in ("", "_before"))
AFTER_CHANGE = (
    "Before and after the change that made the server redraw a participant's room part when the presenter moves, "
    "instead of each page asking every second and redrawing whole (the annotators grade as fast as their pages "
    "answer, so a faster server also gives them more grades to save in the same steps, and their pages count in "
    "the server's CPU):"
)
ANNOTATORS = ("Annotator A", "Annotator B")
SAVED_WITHIN_MS = 60_000  # a grade the page has not said it saved by then is an error
MODEL_LOAD_MS = 600_000


# -- the browsers: the owner and two annotators, in a process of their own ------------------------------------


def _owner(browser, url: str):
    from tests.e2e.conftest import pick, set_number, settle

    page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{url}/ask")
    page.get_by_role("heading", name="Ask", level=1).wait_for()
    page.get_by_role("button", name="Sign in as the owner").click()
    page.get_by_label("Owner's passcode").fill(PASSCODE)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.get_by_text("Owner · signed in with the passcode").wait_for()
    pick(page, "Start from a teaching case", CASE)
    page.get_by_text("Knobs", exact=True).click()
    set_number(page, "Max tokens", 160)
    settle(page)
    return page


def _run_again(page) -> None:
    """A finished run's page: Ask again (the form with its method, knobs and question), then Run."""
    from tests.e2e.conftest import button, settle

    settle(page)
    button(page, "Ask again").click()
    button(page, "Run").click()
    page.get_by_text("CoT: running").wait_for()


def _label(page, turn: int) -> tuple[str, int, float]:
    """One grade on the passage shown: a grade other than the one it has, clicked, then the page's word that it
    saved that grade for that passage. (The passage's text, the grade, seconds from the click to that word.)"""
    from tests.e2e.conftest import FRESH, settle

    settle(page)
    card = page.locator(".snip.judge")
    number = int(card.locator(".tag.rank").inner_text().split()[1])  # "Passage n of N"
    text = card.locator(".full").inner_text()
    given = {g for g in GRADES if page.locator('[data-testid="stBaseButton-primary"]', has_text=f"{g} · ").count()}
    grade = next(g for g in ((turn + i) % len(GRADES) for i in range(len(GRADES))) if g not in given)
    page.get_by_role("button", name=f"{grade} · {GRADES[grade]}").locator(FRESH).click()  # its name ends in its key
    clicked = time.time()
    page.get_by_text(f"Saved: passage {number} graded {grade} · ").wait_for(timeout=SAVED_WITHIN_MS)
    return text, grade, time.time() - clicked


def browsers(url: str, ready, stop, out) -> None:
    from playwright.sync_api import sync_playwright

    from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, button
    from tests.e2e.test_annotate_browser import start as open_annotate

    saves: list[tuple[str, str, int, float]] = []
    waits: list[float] = []  # seconds from a grade's click to the page saying it saved it
    errors: list[str] = []
    runs: list[float] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        owner = _owner(browser, url)
        button(owner, "Run").click()
        owner.get_by_text("CoT: running").wait_for(timeout=MODEL_LOAD_MS)  # the model is loaded, the run going
        annotators = {name: open_annotate(browser, url, name) for name in ANNOTATORS}
        ready.set()
        turn, owner_going = 0, True
        while not stop.is_set():
            for name, page in annotators.items():
                try:
                    text, grade, waited = _label(page, turn)
                    saves.append((name, text, grade, time.time()))
                    waits.append(waited)
                except Exception as exc:  # noqa: BLE001 - every failure is counted and reported
                    errors.append(f"{name}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
                if page.locator('[data-testid="stAlert"]').filter(has_text="nothing was saved").count():
                    errors.append(f"{name}: the page said a label was not saved")
            turn += 1
            ended = (
                owner.get_by_text(re.compile(r"^CoT: (done in|failed after|interrupted after)"))
                if owner_going
                else None
            )
            if ended is not None and ended.count():
                said = ended.first.inner_text()
                if said.startswith("CoT: done in"):
                    runs.append(float(said.split()[3]))  # "CoT: done in 27 s · 1 call · …": the run's own time
                else:
                    errors.append(f"owner: {said.splitlines()[0]}")
                try:
                    _run_again(owner)
                except Exception as exc:  # noqa: BLE001 - the owner stops; the others go on and it is reported
                    errors.append(
                        f"owner: the next run did not start: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
                    )
                    owner_going = False
            for who, page in (("owner", owner), *annotators.items()):
                if shown := page.locator('[data-testid="stException"]').count():
                    errors.append(f"{who}: {shown} exception(s) on the page")
                    stop.set()
        browser.close()
    out.put({"saves": saves, "waits": waits, "errors": errors, "owner_runs_s": runs})


# -- the check and the figures --------------------------------------------------------------------------------


def lost_labels(db: Path, saves: list[tuple[str, str, int, float]]) -> tuple[int, int]:
    """(grades the pages said they saved, of those not held by the database at the end): the last grade each annotator
    gave each passage is what must be there."""
    from core.studio.labels import LabelStore, collect, resolve

    last: dict[tuple[str, str], int] = {}
    for name, text, grade, _ in saves:
        last[(name, " ".join(text.split()))] = grade
    held: dict[tuple[str, str], int] = {}
    labels = LabelStore(db).labels()
    for question in collect(db):
        given, _ = resolve(question, labels)
        for item in question.items:
            for name, row in given.get(item.pool_id, {}).items():
                held[(name, " ".join(item.blind_text().split()))] = row.grade
    return len(saves), sum(held.get(key) != grade for key, grade in last.items())


class Machine(threading.Thread):
    """CPU in percent of one core, sampled every half second: the server's, this benchmark's own (its websocket
    clients, and the browsers' process with its chromium) and the rest of the machine (others' work)."""

    def __init__(self, server: int):
        super().__init__(daemon=True)
        self.server = server
        self.samples: dict[str, list[float]] = {"server": [], "benchmark": [], "others": []}
        self.stop = threading.Event()
        self._known: dict[int, psutil.Process] = {}

    def _used(self, root: psutil.Process) -> dict[int, float]:
        """pid -> CPU since the last sample, for ``root`` and everything it started."""
        used = {}
        for proc in [root, *root.children(recursive=True)]:
            try:
                used[proc.pid] = self._known.setdefault(proc.pid, proc).cpu_percent(None)
            except psutil.Error:
                pass
        return used

    def run(self) -> None:
        me, cores = psutil.Process(), psutil.cpu_count() or 1
        psutil.cpu_percent(None)
        while not self.stop.wait(0.5):
            used = self._used(me)  # the server is a child of this process
            try:
                server = sum(
                    used.get(p.pid, 0.0)
                    for p in [psutil.Process(self.server), *psutil.Process(self.server).children(recursive=True)]
                )
            except psutil.Error:
                server = 0.0
            ours = sum(used.values()) - server
            self.samples["server"].append(server)
            self.samples["benchmark"].append(ours)
            self.samples["others"].append(max(0.0, psutil.cpu_percent(None) * cores - server - ours))

    def figures(self) -> dict[str, dict[str, float | None]]:
        return {
            name: {"mean": round(statistics.mean(v)) if v else None, "p95": round(percentile(v, 95)) if v else None}
            for name, v in self.samples.items()
        }


def _spread(seconds: list[float]) -> dict[str, float | int | None]:
    return {
        "n": len(seconds),
        "p50": round(statistics.median(seconds), 2) if seconds else None,
        "p95": round(percentile(seconds, 95), 2) if seconds else None,
        "max": round(max(seconds), 2) if seconds else None,
    }


def _seconds(runs: list[float]) -> str:
    """How long the owner's runs took: "36 s", or "27 to 53 s each"."""
    low, high = round(min(runs)), round(max(runs))
    return f"{low} s" if low == high else f"{low} to {high} s each"


def _kind(error: str) -> str:
    """What an error is about, to count them by kind."""
    if " never saw step " in error:
        return "a step never seen"
    if error.startswith("participant "):
        return "a participant's connection or page"
    return "the owner's page" if error.startswith("owner") else "an annotator's page"


def _per_step(data: dict) -> list[str]:
    """The server's CPU per participant-step, as rows (results written before it was measured have none)."""
    if not (per := data.get("cpu_ms_per_participant_step")):
        return []
    return [
        f"| the server's CPU per participant-step, without the embedded model's threads / with them | "
        f"{per['without_model']:.0f} / {per['server']:.0f} ms | |"
    ]


def _summary(data: dict) -> str:
    """The figures as a table: measured against the issue's targets."""
    step, use, saving = data["step_to_screen_s"], data["cpu_percent_of_one_core"], data["label_saved_s"]
    runs = data["owner_run_seconds"]
    cpu = "; ".join(
        f"{who} {use[key]['mean']} / {use[key]['p95']}"
        for who, key in (
            ("the server", "server"),
            ("the benchmark's own clients and browsers", "benchmark"),
            ("everything else on the machine", "others"),
        )
    )
    return "\n".join(
        [
            "| | measured | target |",
            "| --- | --- | --- |",
            f"| a participant's screen shows the presenter's step, p50 / p95 / max | {step['p50']} / {step['p95']} / "
            f"{step['max']} s (n = {step['n']} of {step['expected']} participant-steps) | p95 under 3 s |",
            f"| label saves lost | {data['label_saves_lost']} of {data['label_saves']} the pages said they saved | 0 |",
            f"| an annotator's click to the page saying it saved, p50 / p95 | {saving['p50']} / {saving['p95']} s | |",
            f"| errors | {data['errors']}"
            + "".join(f"; {kind}: {n}" for kind, n in data["errors_by_kind"].items())
            + " | 0 |",
            f"| the owner's live runs finished | {data['owner_runs_finished']}"
            + (f" ({_seconds(runs)})" if runs else "")
            + " | |",
            f"| CPU, % of one core, mean / p95 | {cpu} | |",
            *_per_step(data),
        ]
    )


def _compared(before: dict, after: dict) -> str:
    """The same command before and after: the server's CPU per participant-step first, and what the machine was
    doing besides (CPU time per step is steadier than seconds on a busy machine, not immune to it)."""

    def row(name: str, figure) -> str:
        return f"| {name} | {figure(before)} | {figure(after)} |"

    def per(data: dict, which: str) -> str:
        found = data.get("cpu_ms_per_participant_step")
        return f"{found[which]:.1f} ms" if found else "not measured"

    step = "step_to_screen_s"
    return "\n".join(
        [
            f"| `{after['command'].removeprefix('.venv/bin/python -m ')}` | before ({before['when']}) | "
            f"after ({after['when']}) |",
            "| --- | --- | --- |",
            row(
                "the server's CPU per participant-step, without the embedded model's threads",
                lambda d: per(d, "without_model"),
            ),
            row("the same, with the model's threads", lambda d: per(d, "server")),
            row("a participant's screen shows the step, p50 / p95", lambda d: f"{d[step]['p50']} / {d[step]['p95']} s"),
            row("label saves, lost", lambda d: f"{d['label_saves']}, {d['label_saves_lost']}"),
            row("errors", lambda d: str(d["errors"])),
            row(
                "CPU of everything else on the machine, % of one core (mean)",
                lambda d: str(d["cpu_percent_of_one_core"]["others"]["mean"]),
            ),
        ]
    )


def comparison(data: dict, before_file: Path | None = None) -> str:
    """The before-and-after table where the earlier figures of the same command were recorded (``BEFORE`` unless
    named), else nothing."""
    before_file = before_file or BEFORE
    if not before_file.is_file():
        return ""
    before = json.loads(before_file.read_text(encoding="utf-8"))
    return _compared(before, data) if before.get("command") == data.get("command") else ""


def one_core() -> str:
    """The same change at sixty participants on one core, where both runs were recorded, else nothing."""
    if not ONE_CORE.is_file():
        return ""
    data = json.loads(ONE_CORE.read_text(encoding="utf-8"))
    usable = data["machine"].get("usable", data["machine"]["cores"])
    compared = comparison(data, ONE_CORE_BEFORE)
    return (
        f"\n\nOn a machine half as fast: {data['participants']} participants, {data['steps']} steps, everything on "
        f"{usable} of the {data['machine']['cores']} cores (`taskset -c 0`), before and after the same change:"
        f"\n\n{compared}"
        if compared
        else ""
    )


def markdown(data: dict) -> str:
    errors = "".join(f"\n- {e}" for e in data["first_errors"])
    setting = (
        f"{data['participants']} participants follow a live room through {data['steps']} steps, "
        f"{data['dwell_s']} s a step, while {data['annotators']} annotators grade passages on Annotate in their "
        "browsers, one after another as fast as their pages answer, and the signed-in owner keeps one live CoT "
        "run going on the embedded model (the next starts as soon as one ends): one server in shared mode, on "
        f"{data['machine']['cores']} cores ({data['machine']['cpu']}). Measured {data['when']} with "
        f"`{data['command']}`."
    )
    return f"""{setting}

{_summary(data)}

The server checks the room's step five times a second and then redraws the room part of every participant's page at
once, while the model runs; a fifth of a second of each figure is at most that check. A label save
counts once the annotator's page has said it saved that grade for that passage; it is lost if the database does not
hold it at the end. Errors are steps a participant never saw within 15 s, failed connections, exceptions on a page and
grades the page never said it saved. The server's CPU per participant-step is its CPU time over the presenter's
steps divided by participants × steps, with and without the embedded model's threads (they run behind the pages
and take whatever the pages leave, so only the figure without them says what a room costs); it includes the
annotators' and the owner's pages.{(chr(10) + chr(10) + "The first errors:" + errors) if errors else ""}
{(chr(10) + AFTER_CHANGE + chr(10) + chr(10) + compared) if (compared := comparison(data)) else ""}{one_core()}"""


def tables() -> dict[str, str]:
    """The table docs/serving.md shows, from the results file."""
    data = json.loads(RESULTS.read_text(encoding="utf-8"))
    return {
        "room_load": f"{_summary(data)}\n\nMeasured {data['when']} with `{data['command']}` "
        "([more](results/shared_room_load.md))."
        + (f"\n\n{AFTER_CHANGE}\n\n{compared}" if (compared := comparison(data)) else "")
    }


def main() -> int:
    parser = room_arguments(__doc__, participants=60)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="shared-load-"))
    run, case_id = synthetic_run(args.steps)
    entry = RunEntry(run=run, backend="synthetic", case_id=case_id)
    write(RunFile(kind="run", runs=[entry]), home / "pack" / f"{case_id}.json.gz")
    import_runs(RunStore(home / "studio.sqlite"), RunFile(kind="run", runs=[entry]), "benchmark")  # the label pool
    replay = Replay([run])
    steps = min(args.steps, replay.last)
    env = {
        "MEDRAG_WORKSHOP_PACK": str(home / "pack"),
        "MEDRAG_MODE": "shared",
        "MEDRAG_OWNER_PASSCODE": PASSCODE,
        "MEDRAG_CACHE": "off",
        "MEDRAG_BACKGROUND_INDEX": "0",
    }
    spawn = multiprocessing.get_context("spawn")
    ready, stop, out = spawn.Event(), spawn.Event(), spawn.Queue()
    load_before = os.getloadavg()[0]
    with serve_app(home, env) as (url, server):
        rooms = RoomStore(home / "studio.sqlite")
        room, presenter = rooms.open_room(
            title="load test", source="pack", run_ids=[run.id], steps=len(replay), case_id=case_id
        )
        tokens = [rooms.join(room.code, f"participant {i + 1}")[1] for i in range(args.participants)]
        people = spawn.Process(target=browsers, args=(url, ready, stop, out), daemon=True)
        began = time.time()
        people.start()
        print("owner signing in and starting the embedded model's first run; annotators opening Annotate …", flush=True)
        if not ready.wait(900):
            print("error: the owner's first run never started", file=sys.stderr)
            return 1
        print(
            f"ready after {time.time() - began:.0f} s: {args.participants} participants, {steps} steps, dwell "
            f"{args.dwell:.1f} s, room {room.code}",
            flush=True,
        )
        machine = Machine(server.pid)
        machine.start()
        stream = url.replace("http://", "ws://") + "/_stcore/stream"
        latencies, errors, sampler = asyncio.run(
            _drive(args, stream, room.code, presenter, tokens, rooms, steps, server.pid)
        )
        machine.stop.set()
        stop.set()
        found = out.get(timeout=300)
        people.join(60)
    saved, lost = lost_labels(home / "studio.sqlite", found["saves"])
    errors += found["errors"]
    kinds = Counter(_kind(e) for e in errors)
    figures = {
        "participants": args.participants,
        "steps": steps,
        "dwell_s": args.dwell,
        "annotators": len(ANNOTATORS),
        "step_to_screen_s": {**_spread(latencies), "expected": args.participants * steps},
        "label_saves": saved,
        "label_saves_lost": lost,
        "label_saved_s": _spread(found["waits"]),
        "errors": len(errors),
        "errors_by_kind": dict(kinds),
        "first_errors": [e for kind in kinds for e in [e for e in errors if _kind(e) == kind][:3]],
        "owner_runs_finished": len(found["owner_runs_s"]),
        "owner_run_seconds": [round(s, 1) for s in found["owner_runs_s"]],
        "cpu_percent_of_one_core": machine.figures(),
        "cpu_ms_per_participant_step": sampler.ms_per(args.participants * steps),
        "load_average_before": round(load_before, 2),
        "machine": {
            "cpu": platform.processor() or platform.machine(),
            "cores": psutil.cpu_count(),
            "usable": usable_cores(),  # fewer under ``taskset``: a machine that slow
        },
        "command": ".venv/bin/python -m benchmarks.shared_room_load "
        f"--participants {args.participants} --steps {args.steps} --dwell {args.dwell}",
        "when": time.strftime("%Y-%m-%d %H:%M"),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=1) + "\n")
    step = figures["step_to_screen_s"]
    use = figures["cpu_percent_of_one_core"]
    print(
        f"step-to-screen over {step['n']} of {step['expected']} participant-steps: p50 {step['p50']} s, "
        f"p95 {step['p95']} s, max {step['max']} s (target p95 < 3 s)"
    )
    print(
        f"label saves: {saved} the pages said they saved, {lost} lost (target 0), click to saved p50 "
        f"{figures['label_saved_s']['p50']} s, p95 {figures['label_saved_s']['p95']} s; owner's runs finished: "
        f"{len(found['owner_runs_s'])}"
    )
    print(
        f"CPU, % of one core (mean): server {use['server']['mean']}, this benchmark's clients and browsers "
        f"{use['benchmark']['mean']}, everything else {use['others']['mean']}"
    )
    per = figures["cpu_ms_per_participant_step"]
    print(
        f"the server's CPU per participant-step: {per['server']} ms, {per['without_model']} ms without the "
        "embedded model's threads"
    )
    print(f"errors: {len(errors)} (target 0)" + "".join(f"; {kind}: {n}" for kind, n in kinds.items()))
    for error in figures["first_errors"]:
        print(f"  {error}")
    print(f"written to {args.out}")
    return 0 if not errors and not lost else 1


if __name__ == "__main__":
    sys.exit(main())
