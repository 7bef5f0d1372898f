"""Ctrl-C (once or twice) and SIGTERM during ``ask`` and ``eval`` in real processes: no traceback, the runs in
flight end ``cancelled`` (their replies are held for good, so they end only by being cut), eval writes what
finished; a killed process's run becomes ``interrupted`` the next time a store opens, while a live process's run
is left alone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from core.engine.store import RunStore
from tests.fake_endpoint import FakeEndpoint, streams
from tests.waiting import Gate, patience, wait_until

REPO = Path(__file__).resolve().parent.parent
QUESTION = "Which hormone lowers blood glucose?"
QUICK = streams('{"reasoning": "Insulin lowers it.", "answer": "A"}')


REPLY = '{"reasoning": "' + "thinking " * 60 + '", "answer": "A"}'


def held(gate: Gate):
    """A reply whose first words are written, the rest held at ``gate``."""
    return streams(REPLY, pieces=60, gate=gate, held_at=(2,))


@pytest.fixture
def gate():
    held_replies = Gate()
    yield held_replies
    held_replies.open()  # whatever is still held lets its handler end


@pytest.fixture
def endpoint():
    servers = []

    def start(*steps, **kw) -> FakeEndpoint:
        servers.append(FakeEndpoint(*steps, **kw))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


class Cli:
    """``python -m core`` in its own process; what it writes to stderr is read as it comes, so a test can wait
    for a line."""

    def __init__(self, process: subprocess.Popen):
        self.process, self.err = process, []
        self._reader = threading.Thread(
            target=lambda: self.err.extend(iter(process.stderr.readline, "")), daemon=True
        )  # lines are added one by one as they come
        self._reader.start()

    def said(self) -> str:
        return "".join(self.err)

    def ended(self) -> tuple[int, str]:
        """The exit status and everything it wrote, once it has ended (failing if it does not)."""
        try:
            self.process.wait(timeout=patience())  # what it prints to stdout fits the pipe's buffer
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError(f"the process did not end; it said: {self.said()}") from None
        self._reader.join(patience())
        return self.process.returncode, self.process.stdout.read() + self.said()


def start_cli(home: Path, server: FakeEndpoint, *args: str) -> Cli:
    env = {
        **os.environ,
        "MEDRAG_STUDIO_HOME": str(home),
        "MEDRAG_BASE_URL": server.url,
        "MEDRAG_MODEL": "fake",
        "MEDRAG_MAX_RETRIES": "0",
        "MEDRAG_CACHE": "off",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "core", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return Cli(process)


def signal_and_wait(cli: Cli, signals: list[int]) -> tuple[int, str]:
    """Sends each signal once the one before it has been heard (two Ctrl-C at once would arrive as one)."""
    for heard, signum in enumerate(signals, start=1):
        cli.process.send_signal(signum)
        if heard < len(signals):
            wait_until(lambda: cli.said().count("stopping") >= heard, f"signal {heard} to be heard")
    return cli.ended()


@pytest.mark.parametrize(
    ("signals", "code"), [([signal.SIGINT], 130), ([signal.SIGINT, signal.SIGINT], 130), ([signal.SIGTERM], 143)]
)
def test_ask_stops_cleanly(endpoint, gate, tmp_path, signals, code):
    server = endpoint(held(gate))
    cli = start_cli(tmp_path, server, "ask", QUESTION, "--option", "A=Insulin", "--option", "B=Glucagon")
    wait_until(lambda: gate.held, "the reply's first words to be written")
    returncode, said = signal_and_wait(cli, signals)  # it ends although the reply is held: the call was cut
    assert returncode == code and "Traceback" not in said, said
    assert "cancelled:" in said  # the totals line
    [row] = RunStore(tmp_path / "studio.sqlite").list_runs()
    run = RunStore(tmp_path / "studio.sqlite").load_run(row["id"])
    assert run.status == "cancelled" and run.events[-1].payload.error_type == "cancelled"
    # the trace keeps what had arrived (how much, a test cannot see from outside before it signals: see below)
    assert run.events[0].kind == "agent_message" and REPLY.startswith(run.events[0].payload.text)
    assert run.totals.calls == 1


def test_a_signal_after_the_first_words_keeps_them_in_the_trace(endpoint, gate, monkeypatch, capsys):
    """``ask`` in this process, where the test sees the first words arrive (the call queue says the call is writing)
    before it sends Ctrl-C to itself."""
    from core.__main__ import main
    from core.engine.call_queue import QUEUE

    server = endpoint(held(gate))
    for name, value in {"MEDRAG_BASE_URL": server.url, "MEDRAG_MODEL": "fake", "MEDRAG_MAX_RETRIES": "0"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MEDRAG_CACHE", "off")
    before = signal.getsignal(signal.SIGINT)  # a stopped command ignores further Ctrl-C: this process must not

    def writing() -> bool:
        return any([c.state for c in QUEUE.standing(row["id"])] == ["writing"] for row in RunStore().list_runs(limit=1))

    def interrupt_once_writing() -> None:
        wait_until(writing, "the reply's first words to arrive")
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_once_writing, daemon=True).start()
    try:
        assert main(["ask", QUESTION, "--option", "A=Insulin", "--option", "B=Glucagon"]) == 130
    finally:
        signal.signal(signal.SIGINT, before)
    assert "cancelled:" in capsys.readouterr().out
    run = RunStore().load_run(RunStore().list_runs()[0]["id"])
    assert run.status == "cancelled" and run.events[0].payload.text.startswith('{"reasoning"')


def write_bench(folder: Path, n: int) -> Path:
    bench = folder / "bench.json"
    bench.write_text(
        json.dumps(
            {
                "mini": {
                    f"q{i}": {
                        "question": f"Question number {i}: which hormone?",
                        "options": {"A": "Insulin", "B": "Glucagon"},
                        "answer": "A",
                    }
                    for i in range(1, n + 1)
                }
            }
        )
    )
    return bench


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_eval_stops_cleanly_and_writes_what_finished(endpoint, gate, tmp_path, signum, code):
    server = endpoint(script=lambda request: QUICK if "number 1:" in json.dumps(request["messages"]) else held(gate))
    bench, out = write_bench(tmp_path, 4), tmp_path / "results"
    cli = start_cli(
        tmp_path, server, "eval", "--methods", "cot", "--bench", str(bench), "--concurrency", "2", "--out", str(out)
    )
    # two at a time: question 3 is asked only once question 1 has finished; 2 and 3 are held in flight
    wait_until(lambda: len(server.requests) == 3 and gate.held == 2, "questions 2 and 3 held, question 1 done")
    returncode, said = signal_and_wait(cli, [signum])
    assert returncode == code and "Traceback" not in said, said
    assert "interrupted: run the same command again to resume" in said
    items = (out / "items.csv").read_text()
    assert "q1" in items and "q2" not in items
    runs = RunStore(tmp_path / "studio.sqlite").list_runs()
    assert sorted(r["status"] for r in runs) == ["cancelled", "cancelled", "ok"]


def test_a_killed_process_leaves_an_interrupted_run_but_a_live_one_is_left_alone(endpoint, gate, tmp_path):
    server = endpoint(held(gate))
    cli = start_cli(tmp_path, server, "ask", QUESTION)
    wait_until(lambda: gate.held, "the reply's first words to be written")
    store = RunStore(tmp_path / "studio.sqlite")  # another process opens the store while the run is live
    [live] = store.list_runs()
    assert live["status"] == "running" and live["owner_pid"] == cli.process.pid
    cli.process.kill()
    cli.ended()
    [row] = RunStore(tmp_path / "studio.sqlite").list_runs()
    run = store.load_run(row["id"])
    assert run.status == "interrupted" and run.finished is not None and run.answer is None
    assert run.events[-1].payload.error_type == "interrupted"
    assert "process running this run ended" in run.events[-1].payload.message
    assert [e.kind for e in run.events[:-1]] == []  # the call was still streaming: nothing else was recorded
