import re
import shlex
import subprocess
import sys

import pytest

from core.__main__ import main


def python_m_core(command: str, timeout: float) -> subprocess.CompletedProcess:
    """``python -m core COMMAND`` as a user types it in a shell, in a process of its own."""
    argv = [sys.executable, "-m", "core", *shlex.split(command)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def test_help_lists_the_commands(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    for command in ("ask", "setup"):
        assert command in out


def test_every_action_the_help_offers_is_taken(capsys):
    main([])
    assert "list, set or remove the price" in capsys.readouterr().out
    assert main(["prices", "list"]) == 0  # "list" was refused as an invalid choice
    listed = capsys.readouterr().out
    assert main(["prices"]) == 0 and capsys.readouterr().out == listed


def test_empty_question_is_refused_and_nothing_is_sent(capsys, monkeypatch):
    monkeypatch.setenv("MEDRAG_BASE_URL", "http://127.0.0.1:9/v1")  # would fail loudly if contacted
    assert main(["ask", "  "]) == 2
    assert "The question is empty" in capsys.readouterr().err


def test_unknown_method_is_named(capsys):
    assert main(["ask", "q?", "--method", "nope"]) == 2
    assert "unknown method 'nope'" in capsys.readouterr().err


def test_unreachable_endpoint_ends_with_an_error_naming_the_url(capsys, monkeypatch):
    monkeypatch.setenv("MEDRAG_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MEDRAG_MAX_RETRIES", "0")
    assert main(["ask", "Which hormone lowers glucose?", "--option", "A=Insulin", "--option", "B=Glucagon"]) == 1
    out = capsys.readouterr().out
    assert "could not reach the LLM endpoint at http://127.0.0.1:9/v1" in out and out.rstrip().splitlines()[
        -1
    ].startswith("error:")


@pytest.mark.model
def test_ask_streams_events_and_totals_on_the_embedded_model(tmp_path):
    proc = python_m_core(
        'ask "Which hormone lowers blood glucose?" --option A=Insulin --option B=Glucagon --param max_tokens=96',
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert "reasoning · Clinician" in lines[0]
    assert "ANSWER" in lines[-2]
    assert lines[-1].startswith("ok: 1 LLM calls, 0 retrievals")


@pytest.mark.model
def test_a_benchmark_runs_on_the_embedded_model_and_reports_each_arm(tmp_path):
    """The Benchmark page's own path (core.studio.eval), on the real model: a teaching case, CoT and MedRAG; its browser
    test (tests/e2e/test_benchmark_browser.py) uses an endpoint on 127.0.0.1 instead, for speed."""
    import json

    from core.engine.store import RunStore
    from core.studio.teaching import load_cases

    cases = load_cases()[2:3]
    bench = tmp_path / "mini.json"
    bench.write_text(
        json.dumps({"cases": {c.id: {"question": c.question, "options": c.options, "answer": c.answer} for c in cases}})
    )
    # each arm writes the answer alone: the reasoning is what costs time on two cores, and the Ask test above streams it
    proc = python_m_core(
        f"eval --methods cot,medrag --bench {shlex.quote(str(bench))} --out {shlex.quote(str(tmp_path / 'out'))} "
        "--param 'cot.answer_format=answer only' --param 'medrag.answer_format=answer only' --param medrag.k=1 "
        "--param medrag.max_doc_chars=500",
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = list(RunStore().db["eval_items"].rows)
    assert sorted((r["method"], r["qid"]) for r in rows) == sorted((m, c.id) for m in ("cot", "medrag") for c in cases)
    assert all(r["status"] == "ok" and r["model"] for r in rows), rows
    for arm in ("cot", "medrag"):  # the table's rows, each arm on its dataset
        assert re.search(rf"^{arm}\s+cases\s", proc.stdout, re.M), proc.stdout
