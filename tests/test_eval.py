"""The evaluation command on a tiny MIRAGE-format file with the scripted model: scores, resume, concurrency, errors."""

from __future__ import annotations

import csv
import json
import threading
from types import SimpleNamespace

import pytest

from core.__main__ import main
from core.engine.llm import LLM, Endpoint, LLMError
from core.engine.store import RunStore
from core.studio.eval import BenchmarkError, EvalPlan, evaluate, load_benchmark, load_ids, select, summarize
from core.studio.eval.report import format_table
from tests.fakes import ListRetriever, ScriptedLLM, chunk_stream, make_hits, together
from tests.waiting import Gate, patience, wait_until

BENCH = {
    "medqa": {
        "q1": {"question": "Disease 1 first line?", "options": {"A": "aspirin", "B": "metformin"}, "answer": "B"},
        "q2": {"question": "Disease 2 first line?", "options": {"A": "insulin", "B": "statin"}, "answer": "A"},
        "q3": {"question": "Disease 0 first line?", "options": {"A": "rest", "B": "surgery"}, "answer": "A"},
    },
    "pubmedqa": {
        "p1": {"question": "Does X help?", "options": {"A": "yes", "B": "no", "C": "maybe"}, "answer": "A"},
        "p2": {"question": "Does Y harm?", "options": {"A": "yes", "B": "no", "C": "maybe"}, "answer": "B"},
    },
}
IDS = {"medqa": ["q1", "q2"], "pubmedqa": ["p1", "p2"]}


def always(letter: str) -> ScriptedLLM:
    """A model that answers every question with the same letter."""
    return ScriptedLLM().enqueue(*[{"reasoning": "r", "answer": letter, "cited_ids": []}] * 50)


def plan(bench_files, methods=("cot",), **kw) -> EvalPlan:
    bench, ids = bench_files
    return EvalPlan(methods=list(methods), items=select(load_benchmark(bench), load_ids(ids), **kw))


def test_scores_costs_and_stored_runs(bench_files):
    store = RunStore()
    seen = []
    outcome = evaluate(
        plan(bench_files, ("cot", "medrag")),
        llm=always("A"),
        retriever=ListRetriever(make_hits(5)),
        store=store,
        progress=seen.append,
    )

    assert (outcome.ran, outcome.skipped, len(outcome.rows), len(seen)) == (8, 0, 8, 8)
    lines = {(s["method"], s["dataset"]): s for s in summarize(outcome.rows)}
    # gold answers: medqa B, A; pubmedqa A, B -> always "A" is right once per dataset
    assert {k: (s["correct"], s["n"]) for k, s in lines.items()} == {
        ("cot", "medqa"): (1, 2),
        ("cot", "pubmedqa"): (1, 2),
        ("cot", "all"): (2, 4),
        ("medrag", "medqa"): (1, 2),
        ("medrag", "pubmedqa"): (1, 2),
        ("medrag", "all"): (2, 4),
    }
    assert lines[("cot", "all")]["mean_retrievals"] == 0 and lines[("medrag", "all")]["mean_retrievals"] == 1
    assert lines[("medrag", "all")]["mean_calls"] == 1 and lines[("medrag", "all")]["mean_prompt_tokens"] > 0
    for row in outcome.rows:  # every run is kept with its trace
        run = store.load_run(row.run_id)
        assert run.method == row.method and run.events[-1].kind == "answer"


def test_resume_skips_finished_items_and_retries_endpoint_failures(bench_files):
    store = RunStore()
    answers = iter(["A", "unreachable", "not json", "still not json", "A"])  # a bad reply gets one repair

    def reply(_messages):
        value = next(answers)
        if value == "unreachable":
            raise LLMError("could not reach the LLM endpoint")
        return {"reasoning": "r", "answer": value} if value == "A" else value

    llm = ScriptedLLM().on("Options:", reply)
    first = evaluate(plan(bench_files), llm=llm, retriever=None, store=store, concurrency=1)
    statuses = sorted((r.status, r.error_type) for r in first.rows)
    assert statuses == [("error", "LLMError"), ("error", "LLMParseError"), ("ok", ""), ("ok", "")]
    assert summarize(first.rows)[-1]["parse_errors"] == 1
    header, _, *lines = format_table(summarize(first.rows)).splitlines()
    # 2 of the 4 ended in error, 1 of them unparseable; errors count as not correct
    assert header.split()[3:7] == ["95%", "CI", "errors", "unparseable"]
    assert lines[-2].split()[:9] == ["cot", "all", "0.0%", "(0/4)", "0.0%–49.0%", "50%", "(2)", "25%", "(1)"]
    assert lines[-1].startswith("accuracy = correct answers over all questions asked; a run that ended in error")

    again = ScriptedLLM().enqueue({"reasoning": "r", "answer": "B"})  # one reply: only the endpoint failure reruns
    second = evaluate(plan(bench_files), llm=again, retriever=None, store=store)
    assert (second.ran, second.skipped) == (1, 3) and len(again.calls) == 1
    assert sorted(r.status for r in second.rows) == ["error", "ok", "ok", "ok"]

    third = evaluate(plan(bench_files), llm=ScriptedLLM(), retriever=None, store=store)
    assert (third.ran, third.skipped, len(third.rows)) == (0, 4, 4)


def test_a_changed_knob_is_a_new_configuration(bench_files):
    store = RunStore()
    evaluate(plan(bench_files), llm=always("A"), retriever=None, store=store)
    changed = plan(bench_files)
    changed.params = {"cot": {"max_tokens": 128}}
    outcome = evaluate(changed, llm=always("A"), retriever=None, store=store)
    assert (outcome.ran, outcome.skipped) == (4, 0)


def test_the_same_model_name_at_another_endpoint_is_a_new_configuration(bench_files):
    store = RunStore()
    evaluate(plan(bench_files), llm=always("A"), retriever=None, store=store)
    elsewhere = always("A")
    elsewhere.endpoint = Endpoint(base_url="http://gpu.invalid/v1", model="scripted")  # same name, other server
    assert elsewhere.model_name == "scripted" and elsewhere.backend == "scripted @ http://gpu.invalid/v1"
    assert (evaluate(plan(bench_files), llm=elsewhere, retriever=None, store=store).ran) == 4
    assert (evaluate(plan(bench_files), llm=always("A"), retriever=None, store=store).skipped) == 4
    assert LLM(Endpoint(model="")).backend == LLM(Endpoint(model="")).model_name  # embedded: the model alone


def test_questions_run_concurrently(bench_files):
    llm = ScriptedLLM().on("", together(2)({"reasoning": "r", "answer": "A", "cited_ids": []}))
    outcome = evaluate(plan(bench_files), llm=llm, retriever=None, store=RunStore(), concurrency=2)
    # every answer came only once two calls were in flight: 4 questions two at a time, never more
    assert outcome.ran == 4 and [r.status for r in outcome.rows] == ["ok"] * 4 and llm.max_active == 2


def test_stop_cancels_what_is_left_and_a_rerun_finishes_it(bench_files):
    store = RunStore()
    stop, gate = threading.Event(), Gate()
    gate.let(1)  # the first question is answered; the second's call is held until the stop cuts it

    def stop_once_the_second_is_asked(row) -> None:
        wait_until(lambda: gate.held, "the second question's call")
        stop.set()

    outcome = evaluate(
        plan(bench_files),
        llm=ScriptedLLM(gate=gate).enqueue(*[{"reasoning": "r", "answer": "A", "cited_ids": []}] * 4),
        retriever=None,
        store=store,
        concurrency=1,
        progress=stop_once_the_second_is_asked,
        stop=stop,
    )
    assert outcome.cancelled and outcome.ran == 1 and len(outcome.rows) == 1
    rest = evaluate(plan(bench_files), llm=always("A"), retriever=None, store=store)
    assert (rest.ran, rest.skipped) == (3, 1)


def test_selection_by_dataset_and_limit(bench_files):
    bench, ids = bench_files
    items = select(load_benchmark(bench), load_ids(ids), datasets=["pubmedqa"], limit=1)
    assert [(i.dataset, i.qid, i.answer) for i in items] == [("pubmedqa", "p1", "A")]
    assert items[0].question.options == {"A": "yes", "B": "no", "C": "maybe"}
    assert len(select(load_benchmark(bench))) == 5  # no ids file: every question


@pytest.mark.parametrize(
    "content, ids, message",
    [
        ("{not json", None, "not readable JSON"),
        (
            json.dumps({"medqa": {"q1": {"question": "Q?", "options": {"A": "x", "B": "y"}, "answer": "E"}}}),
            None,
            "medqa/q1: the answer 'E' is not one of the options",
        ),
        (json.dumps({"medqa": {"q1": {"question": "Q?"}}}), None, "medqa/q1: an entry needs"),
        (json.dumps(BENCH), {"medqa": ["q9"]}, "medqa: 1 id(s) are not in the benchmark: 'q9'"),
    ],
)
def test_bad_benchmark_files_say_what_is_wrong(tmp_path, content, ids, message):
    path = tmp_path / "bench.json"
    path.write_text(content)
    with pytest.raises(BenchmarkError, match=message.replace("(", r"\(").replace(")", r"\)")):
        select(load_benchmark(path), ids)


def test_command_prints_the_table_writes_files_and_resumes(bench_files, tmp_path, monkeypatch, capsys):
    bench, ids = bench_files
    monkeypatch.setattr("core.studio.cli.eval.LLM", lambda: always("A"))
    out = tmp_path / "out"
    argv = ["eval", "--methods", "cot", "--bench", str(bench), "--ids", str(ids), "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert "cot  medqa" in printed.out and "50.0% (1/2)" in printed.out and "50.0% (2/4)" in printed.out
    with (out / "items.csv").open() as f:
        assert len(list(csv.DictReader(f))) == 4
    summary = json.loads((out / "summary.json").read_text())
    assert summary["settings"]["ran"] == 4 and summary["summary"][-1]["dataset"] == "all"

    assert main(argv + ["--limit", "1"]) == 0  # a subset of what is done: nothing runs
    printed = capsys.readouterr()
    assert "resuming: 2 finished run(s) skipped" in printed.out and "0 run(s) now, 2 from before" in printed.out

    monkeypatch.setattr("core.studio.cli.eval.LLM", lambda: ScriptedLLM())  # any call would fail: none may happen
    assert main(argv + ["--methods", "cot,medrag", "--report"]) == 0  # medrag never ran: no line, nothing runs
    printed = capsys.readouterr()
    assert "0 run(s) now, 4 from before" in printed.out and "50.0% (2/4)" in printed.out
    assert "medrag" not in printed.out.split("0 run(s) now")[0]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--methods", "cot,nope"], "unknown method 'nope'"),
        (["--datasets", "mmlu"], "unknown dataset(s) mmlu"),
        (["--param", "cot.max_tokens=1"], "max_tokens"),
        (["--param", "medrag.k=3"], "--param medrag.k"),
        (["--limit", "0"], "--limit must be at least 1"),
    ],
)
def test_command_rejects_bad_input_before_running(bench_files, monkeypatch, capsys, extra, message):
    bench, ids = bench_files
    monkeypatch.setattr("core.studio.cli.eval.LLM", lambda: ScriptedLLM())  # any call would fail: none may happen
    assert main(["eval", "--methods", "cot", "--bench", str(bench), "--ids", str(ids), *extra]) == 2
    assert message in capsys.readouterr().err


class MeetingEndpointLLM(LLM):
    """The real client, response cache included, over a stand-in endpoint that answers "A" only once ``parties``
    requests are in flight together."""

    def __init__(self, parties: int):
        super().__init__(Endpoint(base_url="http://stand-in.invalid/v1", model="stand-in"))
        self.meeting = threading.Barrier(parties, timeout=patience())

    def _connect(self):
        def create(**_kw):
            self.meeting.wait()
            return chunk_stream(json.dumps({"reasoning": "r", "answer": "A"}), 10, 5)

        return SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))


def test_concurrent_runs_share_a_fresh_response_cache(bench_files):
    """Four questions at once on a new studio folder: the cache is created once, not raced by the threads."""
    outcome = evaluate(plan(bench_files), llm=MeetingEndpointLLM(4), retriever=None, store=RunStore(), concurrency=4)
    assert sorted(r.status for r in outcome.rows) == ["ok"] * 4
