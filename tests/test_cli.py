import subprocess
import sys

import pytest

from core.__main__ import main


def test_help_lists_the_commands(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    for command in ("ask", "setup"):
        assert command in out


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
    assert "could not reach the LLM endpoint at http://127.0.0.1:9/v1" in out and out.rstrip().splitlines()[-1].startswith("error:")


@pytest.mark.model
def test_ask_streams_events_and_totals_on_the_embedded_model(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "core", "ask", "Which hormone lowers blood glucose?", "--option", "A=Insulin",
         "--option", "B=Glucagon", "--param", "max_tokens=96"],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.strip().splitlines()
    assert "reasoning · Clinician" in lines[0]
    assert "ANSWER" in lines[-2]
    assert lines[-1].startswith("ok: 1 LLM calls, 0 retrievals")
