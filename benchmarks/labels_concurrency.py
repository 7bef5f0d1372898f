"""Label writes under contention, on one real SQLite file: threads with their own connections, separate processes,
and a writer killed with SIGKILL in the middle of its work.

    python -m benchmarks.labels_concurrency            # 30 threads × 100, 8 processes × 100, kill -9 trials

Every writer gives 100 labels of its own and also rewrites one shared label per step (all writers fight over the
same 100 rows). Lost = a label a writer was told was saved that is not in the database; duplicated = more than
one current row for one (question, snippet, annotator); surfaced = errors a writer saw (e.g. "database is locked").
"""

from __future__ import annotations

import argparse
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from core.studio.labels import LabelError, LabelRow, LabelStore, QuestionRef

QUESTION = QuestionRef("bench/q1", "bench-hash", "Which artery is occluded in an inferior STEMI?", {}, "benchmark")
SHARED = "shared"
BATCH = 200


def write_labels(db: Path, writer: str, count: int) -> tuple[int, int, list[str]]:
    """``count`` own labels plus ``count`` rewrites of shared rows; returns (own labels saved, shared saved, errors)."""
    store = LabelStore(db)
    own = shared = 0
    errors = []
    for i in range(count):
        try:
            store.set_label(QUESTION, f"s-{i:03d}", writer, i % 4, f"note {i}", source="benchmark")
            own += 1
            store.set_label(QUESTION, f"s-{i:03d}", SHARED, (i + len(writer)) % 4, f"by {writer}", source="benchmark")
            shared += 1
        except LabelError as exc:
            errors.append(str(exc))
    return own, shared, errors


def check(db: Path, writers: list[str], count: int) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "select annotator, snippet_id, count(*) from labels group by question_id, snippet_id, annotator"
        ).fetchall()
        integrity = conn.execute("pragma integrity_check").fetchone()[0]
    finally:
        conn.close()
    present = {(who, sid) for who, sid, _ in rows}
    expected = {(w, f"s-{i:03d}") for w in writers for i in range(count)} | {
        (SHARED, f"s-{i:03d}") for i in range(count)
    }
    return {
        "expected": len(expected),
        "present": len(present & expected),
        "lost": len(expected - present),
        "duplicated": sum(n - 1 for *_, n in rows if n > 1),
        "integrity_ok": int(integrity == "ok"),
    }


def threads_trial(db: Path, writers: int = 30, count: int = 100) -> dict[str, float]:
    LabelStore(db)  # migrated once, before the writers start
    names = [f"thread-{n:02d}" for n in range(writers)]
    results: dict[str, tuple[int, int, list[str]]] = {}
    barrier = threading.Barrier(writers)

    def one(name: str) -> None:
        barrier.wait()
        results[name] = write_labels(db, name, count)

    started = time.perf_counter()
    threads = [threading.Thread(target=one, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - started
    figures = check(db, names, count)
    writes = sum(own + shared for own, shared, _ in results.values())
    return {
        **figures,
        "surfaced_errors": sum(len(e) for *_, e in results.values()),
        "writes": writes,
        "seconds": round(seconds, 2),
        "writes_per_s": round(writes / seconds, 1),
    }


def processes_trial(db: Path, processes: int = 8, count: int = 100) -> dict[str, float]:
    LabelStore(db)
    names = [f"process-{n}" for n in range(processes)]
    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "benchmarks.labels_concurrency", "--worker", str(db), name, str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        for name in names
    ]
    outputs = [p.communicate(timeout=600) for p in procs]
    seconds = time.perf_counter() - started
    errors = sum(int(out.split()[2]) if out.strip() else 1 for out, _ in outputs)
    figures = check(db, names, count)
    return {
        **figures,
        "surfaced_errors": errors,
        "exit_codes_nonzero": sum(p.returncode != 0 for p in procs),
        "seconds": round(seconds, 2),
        "writes_per_s": round(2 * processes * count / seconds, 1),
    }


def kill_trial(db: Path, mode: str = "single", after: int = 40) -> dict[str, int]:
    """A writer that reports each commit on stdout is killed with SIGKILL after ``after`` commits."""
    LabelStore(db)
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.labels_concurrency", "--killable", str(db), mode],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    committed = []
    for line in proc.stdout:
        committed.append(int(line.split()[1]))
        if len(committed) >= after:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait()
    conn = sqlite3.connect(db)  # the database opens after the kill
    try:
        integrity = conn.execute("pragma integrity_check").fetchone()[0]
        present = {r[0] for r in conn.execute("select snippet_id from labels where annotator = 'killed'")}
    finally:
        conn.close()
    wanted = (
        {f"k-{i:05d}" for i in committed}
        if mode == "single"
        else {f"k-{b:03d}-{i:03d}" for b in committed for i in range(BATCH)}
    )
    partial_batches = 0
    if mode == "batch":
        batches = {sid[2:5] for sid in present}
        partial_batches = sum(1 for b in batches if sum(s[2:5] == b for s in present) != BATCH)
    return {
        "committed_before_kill": len(committed),
        "missing_after_kill": len(wanted - present),
        "integrity_ok": int(integrity == "ok"),
        "returncode": proc.returncode,
        "partial_batches": partial_batches,
    }


def _killable(db: Path, mode: str) -> None:
    store = LabelStore(db)
    for n in range(100_000):
        if mode == "single":
            store.set_label(QUESTION, f"k-{n:05d}", "killed", n % 4, source="benchmark")
        else:
            store.set_labels(
                [LabelRow(QUESTION, f"k-{n:03d}-{i:03d}", "killed", i % 4) for i in range(BATCH)], source="benchmark"
            )
        print(f"committed {n}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=3, metavar=("DB", "NAME", "COUNT"), help=argparse.SUPPRESS)
    parser.add_argument("--killable", nargs=2, metavar=("DB", "MODE"), help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=30)
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--count", type=int, default=100)
    args = parser.parse_args()
    if args.worker:
        own, shared, errors = write_labels(Path(args.worker[0]), args.worker[1], int(args.worker[2]))
        print(f"{own} {shared} {len(errors)}")
        return
    if args.killable:
        _killable(Path(args.killable[0]), args.killable[1])
        return
    with tempfile.TemporaryDirectory() as tmp:
        print("threads:", threads_trial(Path(tmp) / "threads.sqlite", args.threads, args.count))
        print("processes:", processes_trial(Path(tmp) / "processes.sqlite", args.processes, args.count))
        for mode in ("single", "batch"):
            print(
                f"kill -9 ({mode}):",
                kill_trial(Path(tmp) / f"kill-{mode}.sqlite", mode, after=40 if mode == "single" else 5),
            )


if __name__ == "__main__":
    main()
