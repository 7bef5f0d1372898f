"""Benchmark files a user gets wrong: each is refused before anything runs, with a message naming the file and
the place in it (dataset/question id), on the command line as from the loader the page uses. No traceback."""

from __future__ import annotations

import gzip
import json

import pytest

from core.__main__ import main
from core.studio.eval import BenchmarkError, load_benchmark, select
from core.studio.eval.mirage import check_benchmark, parse_json
from tests.fakes import ScriptedLLM
from tests.test_eval import BENCH, IDS

MC = {"question": "Q?", "options": {"A": "x", "B": "y"}}


def _write(path, data) -> str:
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


@pytest.mark.parametrize(
    "bench, ids, message",
    [
        # the answer is a list or an object: named, not a TypeError from deep inside
        (
            {"medqa": {"q1": {**MC, "answer": ["A"]}}},
            None,
            'medqa/q1: the answer should be one option letter, found a list ["A"]',
        ),
        (
            {"medqa": {"q1": {**MC, "answer": {"letter": "A"}}}},
            None,
            "medqa/q1: the answer should be one option letter, found an object",
        ),
        (
            {"medqa": {"q1": {**MC, "answer": "E"}}},
            None,
            "medqa/q1: the answer 'E' is not one of the options ['A', 'B']",
        ),
        (
            {"medqa": {"q1": {"question": "Q?", "options": ["x", "y"], "answer": "A"}}},
            None,
            "medqa/q1: 'options' should map letters to texts, found a list",
        ),
        # an ids file naming a dataset the benchmark lacks lists the datasets that exist
        (
            BENCH,
            {"bioasq": ["x"]},
            "the ids file names dataset(s) bioasq that the benchmark lacks; the benchmark has: medqa, pubmedqa",
        ),
        (BENCH, {"medqa": ["q1", "nope", "gone"]}, "medqa: 2 id(s) are not in the benchmark: 'nope', 'gone'"),
        # not MIRAGE-shaped at all
        (
            [1, 2],
            None,
            "is not a MIRAGE-format benchmark: expected {dataset: {question_id: {question, options, answer}}}, "
            "found a list",
        ),
        (IDS, None, "dataset 'medqa' is a list of ids, not {question_id: entry}: this looks like an ids file"),
        ({"medqa": "x"}, None, "dataset 'medqa' should map question ids to entries"),
    ],
)
def test_a_bad_benchmark_names_the_place(tmp_path, bench, ids, message):
    path = _write(tmp_path / "bench.json", bench)
    with pytest.raises(BenchmarkError) as caught:
        select(load_benchmark(path), ids)
    assert message in str(caught.value)


def test_every_bad_entry_is_named_not_only_the_first(tmp_path):
    bench = {"medqa": {f"q{i}": {**MC, "answer": "Z"} for i in range(12)}}
    with pytest.raises(BenchmarkError) as caught:
        select(load_benchmark(_write(tmp_path / "bench.json", bench)))
    lines = str(caught.value).splitlines()
    assert lines[0].startswith("medqa/q0: the answer 'Z'") and lines[7].startswith("medqa/q7")
    assert lines[-1] == "… and 4 more"


@pytest.mark.parametrize(
    "data, message",
    [
        (
            b"{not json",
            "upload.json is not readable JSON: Expecting property name enclosed in double quotes at line 1, column 2",
        ),
        (b"\xff\xfe{}", "upload.json is not UTF-8 text (an invalid byte at offset 0)"),
        (b"\x1f\x8b\x08broken", "upload.json is not a readable gzip file"),
        (b"", "upload.json is not readable JSON"),
    ],
)
def test_an_upload_that_is_not_json_says_so(data, message):
    with pytest.raises(BenchmarkError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_json(data, "upload.json")


def test_an_upload_may_be_gzipped_whatever_its_name():
    data = gzip.compress(json.dumps(BENCH).encode())
    assert list(check_benchmark(parse_json(data, "upload.json"), "upload.json")) == ["medqa", "pubmedqa"]


def _cli(capsys, monkeypatch, *argv: str) -> str:
    monkeypatch.setattr("core.studio.cli.eval.LLM", lambda: ScriptedLLM())  # any call would fail: none may happen
    assert main(["eval", "--methods", "cot", *argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_the_command_says_a_folder_is_a_folder(tmp_path, capsys, monkeypatch):
    assert f"error: {tmp_path} is a folder, not a file" in _cli(capsys, monkeypatch, "--bench", str(tmp_path))
    bench = _write(tmp_path / "bench.json", BENCH)
    assert f"error: {tmp_path} is a folder, not a file" in _cli(
        capsys, monkeypatch, "--bench", bench, "--ids", str(tmp_path)
    )


def test_the_command_names_a_bad_answer_and_a_missing_dataset(tmp_path, capsys, monkeypatch):
    bench = _write(tmp_path / "bench.json", {"medqa": {"q1": {**MC, "answer": ["A"]}}})
    err = _cli(capsys, monkeypatch, "--bench", bench)
    assert "medqa/q1: the answer should be one option letter, found a list" in err
    bench = _write(tmp_path / "bench.json", BENCH)
    ids = _write(tmp_path / "ids.json", {"mmlu": ["1"]})
    err = _cli(capsys, monkeypatch, "--bench", bench, "--ids", ids)
    assert "the ids file names dataset(s) mmlu that the benchmark lacks; the benchmark has: medqa, pubmedqa" in err
    assert "unknown preset 'sema-no-z'" in _cli(capsys, monkeypatch, "--bench", bench, "--preset", "sema-no-z")
    assert "--sample must be at least 1" in _cli(capsys, monkeypatch, "--bench", bench, "--sample", "0")


def test_a_seeded_sample_is_the_same_each_time_and_a_larger_one_extends_it():
    bench = {"medqa": {f"q{i}": {**MC, "answer": "A"} for i in range(40)}}

    def ids(n, seed=0):
        return [item.qid for item in select(bench, sample=n, seed=seed)]

    assert ids(5) == ids(5) and ids(8)[:5] == ids(5) and len(set(ids(40))) == 40
    assert ids(5) != ids(5, seed=1) and ids(5) != [f"q{i}" for i in range(5)]
