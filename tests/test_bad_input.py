"""Bad input is named clearly, with exit code 2 and no traceback: the command line (in-process, and once as a real
process), the app through Streamlit's test runner."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.__main__ import main
from core.engine.retrieval.corpus import CorpusSource, read_corpus

REPO = Path(__file__).resolve().parent.parent
QUESTION = "Which hormone lowers blood glucose?"


@pytest.fixture
def cli(monkeypatch, capsys):
    """``python -m core`` in this process; arguments given as bytes arrive as a shell passes them to Python."""

    def run(*args: str | bytes, env: dict[str, str] | None = None) -> tuple[int, str]:
        monkeypatch.setenv("MEDRAG_MAX_RETRIES", "0")
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        try:
            code = main([os.fsdecode(a) for a in args])
        except SystemExit as exc:  # argparse's own errors
            code = exc.code
        out = capsys.readouterr()
        return code, out.out + out.err

    return run


def test_a_real_process_says_what_is_wrong_without_a_traceback():
    env = {**os.environ, "MEDRAG_TIMEOUT": "abc"}
    result = subprocess.run(
        [sys.executable, "-m", "core", "ask", QUESTION], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr == "error: MEDRAG_TIMEOUT must be a number above 0, not 'abc'\n"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MEDRAG_TIMEOUT": "abc"}, "MEDRAG_TIMEOUT must be a number above 0, not 'abc'"),
        ({"MEDRAG_TIMEOUT": "-5"}, "MEDRAG_TIMEOUT must be a number above 0, not '-5'"),
        ({"MEDRAG_CACHE": "bogus"}, "MEDRAG_CACHE must be one of auto, always, off, not 'bogus'"),
        ({"MEDRAG_MAX_RETRIES": "-1"}, "MEDRAG_MAX_RETRIES must be a whole number 0 or more, not '-1'"),
        ({"MEDRAG_MAX_RETRIES": "2.5"}, "MEDRAG_MAX_RETRIES must be a whole number 0 or more, not '2.5'"),
        ({"MEDRAG_CONTEXT_WINDOW": "8k"}, "MEDRAG_CONTEXT_WINDOW must be a whole number 0 or more, not '8k'"),
    ],
)
def test_environment_values_that_do_not_parse(cli, env, message):
    assert cli("ask", QUESTION, "--method", "cot", env=env) == (2, f"error: {message}\n")


def test_the_app_names_a_bad_environment_value_instead_of_a_traceback(monkeypatch):
    monkeypatch.setenv("MEDRAG_TIMEOUT", "abc")
    at = AppTest.from_file(str(REPO / "streamlit_app.py"), default_timeout=30).run()
    assert not at.exception
    assert "MEDRAG_TIMEOUT must be a number above 0, not 'abc'" in at.error[0].value


def test_bytes_that_are_not_utf8_in_a_question_or_an_option(cli):
    code, said = cli("ask", QUESTION.encode() + b" \xff\xfe", "--method", "cot")
    assert code == 2 and "The question holds bytes that are not valid UTF-8 (at character 37)" in said
    code, said = cli("ask", QUESTION, "--option", b"A=Insu\xe9lin", "--option", "B=Glucagon", "--method", "cot")
    assert code == 2 and "Option A holds bytes that are not valid UTF-8 (at character 5)" in said


def test_a_repeated_option_letter_is_refused(cli):
    code, said = cli("ask", QUESTION, "--option", "A=Insulin", "--option", "A=Glucagon", "--method", "cot")
    assert code == 2 and "--option A is given twice ('Insulin' and 'Glucagon')" in said


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ("max_tokens=99999", "--param max_tokens=99999: CoT's max_tokens takes a whole number from 32 to 4096"),
        ("max_tokens=lots", '--param max_tokens="lots": CoT\'s max_tokens takes a whole number from 32 to 4096'),
        ("rounds=2", "--param rounds: CoT has no knob 'rounds'; its knobs are answer_format, max_tokens"),
    ],
)
def test_param_errors_name_the_knob_and_its_range(cli, param, message):
    code, said = cli("ask", QUESTION, "--method", "cot", "--param", param)
    assert code == 2 and message in said, said


def test_eval_param_errors_name_the_knob_and_its_range(cli, tmp_path):
    bench = tmp_path / "b.json"
    bench.write_text(json.dumps({"d": {"1": {"question": "q?", "options": {"A": "a", "B": "b"}, "answer": "A"}}}))
    code, said = cli("eval", "--methods", "imedrag", "--bench", str(bench), "--param", "imedrag.rounds=0")
    assert code == 2 and "--param imedrag.rounds=0: i-MedRAG's rounds takes a whole number from 1 to 8" in said


def test_corpus_paths_that_are_missing_or_empty(cli, tmp_path):
    code, said = cli("ask", QUESTION, "--method", "medrag", "--corpus", str(tmp_path / "nowhere.jsonl"))
    assert code == 2 and "nowhere.jsonl: no such corpus file or folder" in said
    code, said = cli("ask", QUESTION, "--method", "medrag", "--corpus", "")
    assert code == 2 and "argument --corpus: an empty path" in said
    code, said = cli("eval", "--bench", str(tmp_path / "b.json"), "--corpus", "")  # refused before the bench is read
    assert code == 2 and "argument --corpus: an empty path" in said
    code, said = cli("search", "insulin", "--path", "")
    assert code == 2 and "argument --path: an empty path" in said
    (tmp_path / "folder").mkdir()
    code, said = cli("ask", QUESTION, "--method", "medrag", "--corpus", str(tmp_path / "folder"))
    assert code == 2 and "folder: the folder holds no .jsonl or .jsonl.gz files" in said
    (tmp_path / "blank.jsonl").write_text("\n\n")
    code, said = cli(
        "ask",
        QUESTION,
        "--method",
        "medrag",
        "--corpus",
        str(tmp_path / "blank.jsonl"),
        env={"MEDRAG_INDEX_DIR": str(tmp_path / "indexes")},
    )  # its lock file stays out of the shared one
    assert code == 2 and "blank.jsonl: no usable snippets" in said


LINE = {"id": "s1", "title": "Insulin", "content": "Insulin lowers blood glucose."}


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        (b"[1, 2]", "corpus.json: expected a JSON object"),
        ('{"name": "caf\u00e9"}'.encode("latin-1"), "corpus.json: not UTF-8 text (byte 0xe9 at offset 13)"),
    ],
)
def test_a_corpus_json_that_is_not_an_object_or_not_utf8(cli, tmp_path, meta, message):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.jsonl").write_text(json.dumps(LINE) + "\n")
    (folder / "corpus.json").write_bytes(meta)
    code, said = cli("ask", QUESTION, "--method", "medrag", "--corpus", str(folder))
    assert code == 2 and message in said, said


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_one_byte_that_is_not_utf8_spoils_its_line_only(tmp_path, suffix):
    lines = [json.dumps({**LINE, "id": f"s{i}"}).encode() for i in range(1, 2001)]
    lines[1233] = lines[1233].replace(b"Insulin lowers", b"Insulin \xff lowers")  # line 1234
    data = b"\n".join(lines) + b"\n"
    path = tmp_path / f"c{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    snippets, report = read_corpus(CorpusSource.from_path(path))
    assert len(snippets) == 1999 and [p.line for p in report.skipped] == [1234]
    assert "not UTF-8 text (byte 0xff at column" in report.skipped[0].reason
