"""Ctrl-C (once or twice) and SIGTERM during ``ask`` and ``eval`` in real processes: no traceback, the runs in
flight end ``cancelled`` within seconds, eval writes what finished; a killed process's run becomes
``interrupted`` the next time a store opens, while a live process's run is left alone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.store import RunStore
from tests.fake_endpoint import FakeEndpoint, streams

REPO = Path(__file__).resolve().parent.parent
QUESTION = "Which hormone lowers blood glucose?"
SLOW = streams('{"reasoning": "' + "thinking " * 60 + '", "answer": "A"}', pieces=60, chunk_delay=0.5)  # 30 s
QUICK = streams('{"reasoning": "Insulin lowers it.", "answer": "A"}')


@pytest.fixture
def endpoint():
    servers = []

    def start(*steps, **kw) -> FakeEndpoint:
        servers.append(FakeEndpoint(*steps, **kw))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def start_cli(home: Path, server: FakeEndpoint, *args: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "MEDRAG_STUDIO_HOME": str(home),
        "MEDRAG_BASE_URL": server.url,
        "MEDRAG_MODEL": "fake",
        "MEDRAG_MAX_RETRIES": "0",
        "MEDRAG_CACHE": "off",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "core", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(condition, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while not condition():
        assert time.time() < deadline, "timed out waiting"
        time.sleep(0.05)


def signal_and_wait(process: subprocess.Popen, signals: list[int]) -> tuple[int, str, float]:
    sent = time.perf_counter()
    for signum in signals:
        process.send_signal(signum)
        time.sleep(0.2)
    out, err = process.communicate(timeout=30)
    return process.returncode, out + err, time.perf_counter() - sent


@pytest.mark.parametrize(
    ("signals", "code"), [([signal.SIGINT], 130), ([signal.SIGINT, signal.SIGINT], 130), ([signal.SIGTERM], 143)]
)
def test_ask_stops_cleanly(endpoint, tmp_path, signals, code):
    server = endpoint(SLOW)
    process = start_cli(tmp_path, server, "ask", QUESTION, "--option", "A=Insulin", "--option", "B=Glucagon")
    wait_for(lambda: server.requests)
    time.sleep(0.5)  # some of the reply has streamed
    returncode, said, seconds = signal_and_wait(process, signals)
    assert returncode == code and "Traceback" not in said and seconds < 5, said
    assert "cancelled:" in said  # the totals line
    [row] = RunStore(tmp_path / "studio.sqlite").list_runs()
    run = RunStore(tmp_path / "studio.sqlite").load_run(row["id"])
    assert run.status == "cancelled" and run.events[-1].payload.error_type == "cancelled"
    assert run.events[0].kind == "agent_message" and run.events[0].payload.text.startswith('{"reasoning"')
    assert run.totals.calls == 1


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
def test_eval_stops_cleanly_and_writes_what_finished(endpoint, tmp_path, signum, code):
    server = endpoint(script=lambda request: QUICK if "number 1:" in json.dumps(request["messages"]) else SLOW)
    bench, out = write_bench(tmp_path, 4), tmp_path / "results"
    process = start_cli(
        tmp_path, server, "eval", "--methods", "cot", "--bench", str(bench), "--concurrency", "2", "--out", str(out)
    )
    wait_for(lambda: len(server.requests) >= 2)
    time.sleep(1.0)  # question 1 has finished; two slow ones are in flight
    returncode, said, seconds = signal_and_wait(process, [signum])
    assert returncode == code and "Traceback" not in said and seconds < 8, said
    assert "interrupted: run the same command again to resume" in said
    items = (out / "items.csv").read_text()
    assert "q1" in items and "q2" not in items
    runs = RunStore(tmp_path / "studio.sqlite").list_runs()
    assert sorted(r["status"] for r in runs) == ["cancelled", "cancelled", "ok"]


def test_a_killed_process_leaves_an_interrupted_run_but_a_live_one_is_left_alone(endpoint, tmp_path):
    server = endpoint(SLOW)
    process = start_cli(tmp_path, server, "ask", QUESTION)
    wait_for(lambda: server.requests)
    time.sleep(0.5)
    store = RunStore(tmp_path / "studio.sqlite")  # another process opens the store while the run is live
    [live] = store.list_runs()
    assert live["status"] == "running" and live["owner_pid"] == process.pid
    process.kill()
    process.wait()
    [row] = RunStore(tmp_path / "studio.sqlite").list_runs()
    run = store.load_run(row["id"])
    assert run.status == "interrupted" and run.finished is not None and run.answer is None
    assert run.events[-1].payload.error_type == "interrupted"
    assert "process running this run ended" in run.events[-1].payload.message
    assert [e.kind for e in run.events[:-1]] == []  # the call was still streaming: nothing else was recorded
