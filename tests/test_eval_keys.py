"""Results are keyed by what was asked: a benchmark whose entry under a known id changed (question, options or gold)
runs that question again instead of scoring old runs against it; stores from before keep working."""

from __future__ import annotations

import copy
import json

from core.engine.methods import get
from core.engine.runner import execute
from core.engine.store import RunStore, migrations
from core.studio.eval import EvalPlan, evaluate, load_benchmark, load_ids, select, summarize
from core.studio.eval.results import config_key
from tests.fakes import ScriptedLLM
from tests.test_eval import BENCH, IDS, always, plan


def _plan_for(tmp_path, bench: dict) -> EvalPlan:
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(bench))
    ids = tmp_path / "ids.json"
    ids.write_text(json.dumps(IDS))
    return EvalPlan(methods=["cot"], items=select(load_benchmark(path), load_ids(ids)))


def test_a_changed_question_gold_or_option_under_a_known_id_runs_again(bench_files, tmp_path):
    store = RunStore()
    first = evaluate(plan(bench_files), llm=always("A"), retriever=None, store=store)
    assert summarize(first.rows)[-1]["correct"] == 2  # golds B, A, A, B

    changed = copy.deepcopy(BENCH)
    changed["medqa"]["q1"]["answer"] = "A"  # the gold letter
    changed["medqa"]["q2"]["options"]["B"] = "fibrate"  # one option's text
    changed["pubmedqa"]["p1"]["question"] = "Does Z help?"  # the question
    again = always("B")
    second = evaluate(_plan_for(tmp_path, changed), llm=again, retriever=None, store=store)
    assert (second.ran, second.skipped) == (3, 1) and len(again.calls) == 3
    scored = {r.qid: (r.gold, r.predicted, r.correct) for r in second.rows}
    assert scored == {"q1": ("A", "B", 0), "q2": ("A", "B", 0), "p1": ("A", "B", 0), "p2": ("B", "A", 0)}
    asked = {r.qid: store.load_run(r.run_id) for r in second.rows}
    # each row's run is the one that saw the changed entry
    assert asked["p1"].question == "Does Z help?" and asked["q2"].options["B"] == "fibrate"

    # the original file still has its own results: nothing runs for it
    third = evaluate(plan(bench_files), llm=ScriptedLLM(), retriever=None, store=store)
    assert (third.ran, third.skipped) == (0, 4) and summarize(third.rows)[-1]["correct"] == 2


def test_rows_from_before_are_keyed_by_what_their_run_asked_or_run_again(bench_files, tmp_path, monkeypatch):
    """A store written before results were keyed by what was asked: each row gets the key of the question its run
    saw (with the gold it was scored against); a row whose run was deleted matches nothing and runs again."""
    path = tmp_path / "old.sqlite"
    # the store as it was before results were keyed by what was asked (migration 6)
    monkeypatch.setattr(migrations, "MIGRATIONS", [m for m in migrations.MIGRATIONS if m[0] < 6])
    old = RunStore(path)
    items = plan(bench_files, datasets=["medqa"]).items
    llm = always("A")
    # knobs as they were stored then: the answer format was always concrete ("reasoning first" by default)
    knobs = {**get("cot").params().model_dump(), "answer_format": "reasoning first"}
    config = config_key("cot", knobs, llm.backend, [])
    for item in items:
        run = execute("cot", item.question, llm=llm, store=old)
        old.db["eval_items"].insert(
            {  # a row as the earlier schema held it
                "config": config,
                "method": "cot",
                "dataset": item.dataset,
                "qid": item.qid,
                "run_id": run.id,
                "model": run.model,
                "params": json.dumps(run.params),
                "corpus": "[]",
                "gold": item.answer,
                "predicted": run.answer.choice,
                "correct": int(run.answer.choice == item.answer),
                "status": "ok",
                "error_type": "",
                "calls": 1,
                "retrievals": 0,
                "prompt_tokens": 1,
                "completion_tokens": 1,
                "seconds": 0.1,
                "finished": run.finished,
            }
        )
    old.delete_run(old.db["eval_items"].get((config, "medqa", "q2"))["run_id"])
    old.db.conn.close()
    monkeypatch.undo()

    store = RunStore(path)  # migration 6 runs here
    keys = {r["qid"]: r["asked"] for r in store.db["eval_items"].rows}
    assert keys == {"q1": items[0].asked, "q2": ""}
    again = always("A")
    outcome = evaluate(EvalPlan(methods=["cot"], items=items), llm=again, retriever=None, store=store)
    assert (outcome.ran, outcome.skipped, len(again.calls)) == (1, 1, 1)
    assert sorted((r.qid, r.asked) for r in outcome.rows) == [("q1", items[0].asked), ("q2", items[1].asked)]


def test_a_change_in_retrieval_scoring_keys_retrieving_methods_apart_and_leaves_cot_alone():
    """Results of a retrieving method found their snippets one way; after the scoring changed they do not count
    (same knobs, other snippets), while methods that never retrieve keep theirs."""
    plan_ = EvalPlan(methods=["cot", "medrag"], items=[])
    keys = plan_.config_keys("qwen", ["hpo", "teaching_pack"], "reasoning first")
    medrag = {**get("medrag").params().model_dump(), "answer_format": "reasoning first"}
    assert keys["medrag"] != config_key("medrag", medrag, "qwen", ["hpo", "teaching_pack"])  # the key before
    cot = {**get("cot").params().model_dump(), "answer_format": "reasoning first"}
    assert keys["cot"] == config_key("cot", cot, "qwen", [])
    assert keys["medrag"] != config_key("medrag", medrag, "qwen", ["hpo", "teaching_pack"], "another scoring")


def test_the_live_asked_key_is_still_the_one_migration_6_gave_old_rows():
    """Migration 6 keeps its own copy of the key (the store imports nothing from eval): were the live key to change,
    every stored result would stop matching, and that needs a migration that re-keys the rows."""
    from core.studio.eval.keys import asked_key

    for question, options, gold in [
        ("Does X help?", {"A": "yes", "B": "no"}, "A"),
        ("Qué arteria?", {"B": "LAD", "A": "RCA"}, "B"),
        ("", {}, ""),
    ]:
        assert migrations._asked_key_v6(question, options, gold) == asked_key(question, options, gold)
