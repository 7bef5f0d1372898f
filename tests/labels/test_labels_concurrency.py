"""Label writes from many threads and from real processes on one SQLite file, and a writer killed with SIGKILL.
Small counts keep it fast; ``python -m benchmarks.labels_concurrency`` measures 30 threads and 8 processes × 100."""

from __future__ import annotations

from benchmarks.labels_concurrency import kill_trial, processes_trial, threads_trial


def test_thirty_threads_lose_and_duplicate_nothing(tmp_path):
    figures = threads_trial(tmp_path / "t.sqlite", writers=30, count=5)
    assert figures["present"] == figures["expected"] == 30 * 5 + 5
    assert (figures["lost"], figures["duplicated"], figures["surfaced_errors"]) == (0, 0, 0)
    assert figures["integrity_ok"] == 1


def test_processes_lose_and_duplicate_nothing(tmp_path):
    figures = processes_trial(tmp_path / "p.sqlite", processes=3, count=10)
    assert figures["present"] == figures["expected"] == 3 * 10 + 10
    assert (figures["lost"], figures["duplicated"], figures["surfaced_errors"], figures["exit_codes_nonzero"]) == (
        0,
        0,
        0,
        0,
    )


def test_a_writer_killed_mid_batch_leaves_every_committed_label_and_no_partial_batch(tmp_path):
    single = kill_trial(tmp_path / "k1.sqlite", "single", after=10)
    assert single["returncode"] == -9 and single["committed_before_kill"] == 10
    assert (single["missing_after_kill"], single["integrity_ok"]) == (0, 1)
    batch = kill_trial(tmp_path / "k2.sqlite", "batch", after=2)
    assert (batch["missing_after_kill"], batch["partial_batches"], batch["integrity_ok"]) == (0, 0, 1)
