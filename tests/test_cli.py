import os
import re
import shlex
import subprocess
import sys

import pytest

from core.__main__ import main


def python_m_core(command: str, timeout: float, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``python -m core COMMAND`` as a user types it in a shell, in a process of its own (with ``env`` on top of this
    one's environment)."""
    argv = [sys.executable, "-m", "core", *shlex.split(command)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})


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


def test_a_benchmark_runs_as_a_command_and_reports_each_arm(tmp_path):
    """The Benchmark page's own path (core.studio.eval) in a process of its own, as a user types it: a teaching case,
    CoT and MedRAG over the default corpus (real retrieval), on an OpenAI-compatible endpoint on 127.0.0.1 that
    answers every call by its schema. Each method on the embedded model runs in its own smoke test."""
    import json

    from core.engine.store import RunStore
    from core.studio.teaching import load_cases
    from tests.fake_endpoint import FakeEndpoint, streams

    def answer(request: dict):
        cites = "cited_ids" in json.dumps(request)  # MedRAG's reader is asked for the ids it cites
        return streams(json.dumps({"reasoning": "r", "answer": "A", **({"cited_ids": []} if cites else {})}))

    cases = load_cases()[2:3]
    bench = tmp_path / "mini.json"
    bench.write_text(
        json.dumps({"cases": {c.id: {"question": c.question, "options": c.options, "answer": c.answer} for c in cases}})
    )
    endpoint = FakeEndpoint(script=answer)
    try:
        proc = python_m_core(
            f"eval --methods cot,medrag --bench {shlex.quote(str(bench))} --out {shlex.quote(str(tmp_path / 'out'))} "
            "--param medrag.k=1",
            timeout=900,
            env={"MEDRAG_BASE_URL": endpoint.url, "MEDRAG_MODEL": "scripted", "MEDRAG_CACHE": "off"},
        )
    finally:
        endpoint.close()
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = list(RunStore().db["eval_items"].rows)
    assert sorted((r["method"], r["qid"]) for r in rows) == sorted((m, c.id) for m in ("cot", "medrag") for c in cases)
    assert all(r["status"] == "ok" and r["model"] == "scripted" for r in rows), rows
    assert len(endpoint.requests) == 2  # one call each
    for arm in ("cot", "medrag"):  # the table's rows, each arm on its dataset
        assert re.search(rf"^{arm}\s+cases\s", proc.stdout, re.M), proc.stdout
