"""``eval`` exits non-zero when every run it made ended in an error, and 0 when some finished."""

from __future__ import annotations

import json

import pytest

from core.__main__ import main
from tests.fake_endpoint import FakeEndpoint, error, streams

GOOD = streams('{"reasoning": "r", "answer": "A"}')


@pytest.fixture
def bench(tmp_path):
    path = tmp_path / "bench.json"
    path.write_text(
        json.dumps(
            {
                "mini": {
                    f"q{i}": {"question": f"Question {i}?", "options": {"A": "a", "B": "b"}, "answer": "A"}
                    for i in (1, 2, 3)
                }
            }
        )
    )
    return path


@pytest.fixture
def eval_against(monkeypatch, capsys, bench, tmp_path):
    servers = []

    def run(**endpoint) -> tuple[int, str]:
        servers.append(FakeEndpoint(**endpoint))
        for key, value in {
            "MEDRAG_BASE_URL": servers[-1].url,
            "MEDRAG_MODEL": "fake",
            "MEDRAG_MAX_RETRIES": "0",
            "MEDRAG_CACHE": "off",
        }.items():
            monkeypatch.setenv(key, value)
        code = main(["eval", "--methods", "cot", "--bench", str(bench), "--out", str(tmp_path / "out")])
        out = capsys.readouterr()
        return code, out.out + out.err

    yield run
    for server in servers:
        server.close()


def test_every_run_failing_is_exit_1_and_says_so(eval_against):
    code, said = eval_against(script=lambda _request: error(500, "the model is not loaded"))
    assert code == 1
    assert "error: all 3 run(s) ended in an error, so nothing was scored; the first: " in said
    assert "answered HTTP 500" in said and "the model is not loaded" in said


def test_some_runs_finishing_is_exit_0(eval_against):
    code, said = eval_against(script=lambda request: GOOD if "Question 2?" in json.dumps(request) else error(500))
    assert code == 0, said


def test_an_empty_selection_is_refused_and_exits_non_zero(bench, tmp_path, capsys):
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps({"mini": []}))
    assert main(["eval", "--methods", "cot", "--bench", str(bench), "--ids", str(ids), "--out", str(tmp_path)]) == 2
    assert f"no question is selected: the ids file {ids} lists none; nothing to run" in capsys.readouterr().err
    assert not (tmp_path / "summary.json").exists()
