"""Pools, question ids, the label store, agreement and metrics, on a real SQLite file with saved runs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from core.engine.store import RunStore
from core.studio.labels import LabelError, LabelStore, RunFilter, collect, consensus, derive_question, resolve
from core.studio.labels.agreement import alpha, disagreements, fleiss, kappas, pairwise
from core.studio.labels.identity import generated_id, question_hash
from core.studio.labels.metrics import MetricSettings, compare_methods, run_metrics, summarize
from core.studio.labels.progress import progress, queue_order
from core.studio.teaching import load_cases
from tests.labels.helpers import hit, save_run


@pytest.fixture
def store() -> RunStore:
    return RunStore()


def test_pool_dedupes_by_id_and_by_text_and_keys_generated_documents_by_their_text(store):
    save_run(store, "medrag", [hit("s1"), hit("s2"), hit("copy", "text of s1")])
    save_run(store, "medrgag", [hit("s2"), hit("s3")], generated=["Written background.", "text of s2"])
    save_run(store, "medrgag", [hit("s3")], generated=["Written background."])  # same text, same gen-1 id
    [question] = collect(store.path)
    groups = sorted(sorted(item.ids) for item in question.items)
    assert groups == sorted(
        [["copy", "s1"], sorted(["s2", generated_id("text of s2")]), ["s3"], [generated_id("Written background.")]]
    )
    first, second, third = question.runs
    assert first.ranked == ["copy", "s2"]  # s1 and its copy are one item, listed once
    assert second.ranked == ["s2", "s3"] and second.generated == [generated_id("Written background."), "s2"]
    written = question.item(generated_id("Written background."))
    assert written.generated and written.methods == ["medrgag"] and len(written.occurrences) == 2
    assert question.item("s3").blind_text() == "Doc s3. text of s3"  # a title reads as the first sentence


def test_ranked_lists_follow_rounds_and_a_rescoring_moves_its_documents_first(store):
    save_run(store, "sema", [hit("a"), hit("b")], rounds=[[hit("b"), hit("c")], [hit("a")]])
    save_run(store, "medrgag", [hit("a"), hit("b"), hit("c"), hit("d")], rescored=[hit("c"), hit("a")])
    [q] = collect(store.path)
    sema, medrgag = q.runs
    assert sema.ranked == ["a", "b", "c"]  # a round that finds nothing new changes nothing
    assert medrgag.ranked == ["c", "a", "b", "d"]


def test_blind_order_is_stable_per_annotator_and_differs_between_annotators(store):
    save_run(store, "medrag", [hit(f"s{i}") for i in range(12)])
    [question] = collect(store.path)
    ann = [i.pool_id for i in question.blind_order("ann")]
    assert ann == [i.pool_id for i in collect(store.path)[0].blind_order("ann")]
    assert ann != [i.pool_id for i in question.blind_order("bob")]
    assert sorted(ann) == sorted(i.pool_id for i in question.items)


def test_the_queue_hands_out_first_what_others_began_and_last_what_is_done_each_tier_in_my_shuffle(store):
    save_run(store, "medrag", [hit(f"s{i}") for i in range(8)])
    [question] = collect(store.path)
    labels = LabelStore(store.path)
    for who, ids in {"bob": ["s0", "s1"], "cy": ["s0"], "ann": ["s2"]}.items():
        for sid in ids:
            labels.set_label(question.ref, sid, who, 2)
    given, _ = resolve(question, labels.labels())
    shuffle = [i.pool_id for i in question.blind_order("ann")]

    def tiers(target: int) -> list[str]:
        return [i.pool_id for i in queue_order(question, given, "ann", target)]

    # three judges wanted: s0 (two others) nearest done, then s1 (one); my own s2 stays among the untouched
    rest = [sid for sid in shuffle if sid not in ("s0", "s1")]
    assert tiers(3) == ["s0", "s1", *rest]
    assert tiers(2) == ["s1", *rest, "s0"]  # two wanted: s0 is done and goes last
    assert tiers(1) == [
        *(sid for sid in shuffle if sid not in ("s0", "s1")),
        *(s for s in shuffle if s in ("s0", "s1")),
    ]
    theirs = [i.pool_id for i in queue_order(question, given, "dee", 3)]  # two judges, then one each, in dee's shuffle
    assert theirs[:3] == ["s0", *(i.pool_id for i in question.blind_order("dee") if i.pool_id in ("s1", "s2"))]


def test_question_ids_teaching_case_hash_and_kept_once_labelled(store):
    case = load_cases()[0]
    assert derive_question(case.question, case.options).question_id == f"teaching/{case.id}"
    assert (
        derive_question("  Which   DRUG?", {"A": "x", "B": "y"}).question_id
        == derive_question("which drug?", {"B": "y", "A": "x"}).question_id
    )  # spacing, case and option order
    ref = derive_question("Which drug?", {"A": "x", "B": "y"})
    assert ref.question_id.startswith("q/")
    bench = {question_hash("Which drug?", {"A": "x", "B": "y"}): ("medqa/0042", "B")}
    assert derive_question("Which drug?", {"A": "x", "B": "y"}, bench).question_id == "medqa/0042"
    # once labelled under its hash id, a later benchmark run of the same question keeps that id
    registered = {ref.qhash: ref.question_id}
    assert derive_question("Which drug?", {"A": "x", "B": "y"}, bench, registered).question_id == ref.question_id


def test_queue_filters_by_source_method_and_date(store):
    case = load_cases()[0]
    save_run(store, "medrag", [hit("s1")], question=case.question, options=case.options)
    save_run(store, "sema", [hit("s2")])
    assert {q.question_id for q in collect(store.path)} == {f"teaching/{case.id}", collect(store.path)[0].question_id}
    [teaching] = collect(store.path, RunFilter(source="teaching"))
    assert teaching.gold == case.answer and teaching.question_id == f"teaching/{case.id}"
    assert collect(store.path, RunFilter(source="teaching", cases=frozenset({"no-such-case"}))) == []
    assert [q.runs[0].method for q in collect(store.path, RunFilter(methods=frozenset({"sema"})))] == ["sema"]
    assert collect(store.path, RunFilter(since=2e9)) == [] and collect(store.path, RunFilter(source="eval")) == []


def test_one_current_label_per_key_and_every_change_in_history(store):
    save_run(store, "medrag", [hit("s1"), hit("s2")])
    [q] = collect(store.path)
    labels = LabelStore(store.path)
    assert labels.set_label(q.ref, "s1", "ann", 1).new == 1
    assert labels.set_label(q.ref, "s1", "ann", 1).unchanged == 1  # the same grade again changes nothing
    assert labels.set_label(q.ref, "s1", "ann", 3, "answers it").changed == 1
    assert labels.set_label(q.ref, "s1", "ann", 2).changed == 1  # a new grade keeps the note
    [row] = labels.labels()
    assert (row.grade, row.note) == (2, "answers it")
    history = [(h["old_grade"], h["new_grade"], h["new_note"]) for h in labels.history(q.question_id)]
    assert history == [(None, 1, ""), (1, 3, "answers it"), (3, 2, "answers it")]
    with pytest.raises(LabelError, match="annotator name is empty"):
        labels.set_label(q.ref, "s1", "   ", 2)
    with pytest.raises(LabelError, match="outside the scale"):
        labels.set_label(q.ref, "s1", "ann", 4)
    assert len(labels.labels()) == 1 and len(labels.history()) == 3  # refused labels wrote nothing
    assert labels.registered()[q.question_id]["question"] == q.ref.question


def test_labels_on_a_text_duplicate_count_for_the_pooled_item(store):
    save_run(store, "medrag", [hit("s1")])
    [q] = collect(store.path)
    labels = LabelStore(store.path)
    labels.set_label(q.ref, "s1", "ann", 3)
    save_run(store, "sema", [hit("copy", "text of s1")])  # a later run shows the same text under another id
    [q] = collect(store.path)
    found, orphans = resolve(q, labels.labels())
    assert found == {q.by_id["copy"]: {"ann": labels.labels()[0]}} and orphans == []


def test_consensus_prefers_adjudication_then_majority_then_the_lower_median():
    assert consensus([3, 3, 1]) == 3 and consensus([0, 3]) == 0 and consensus([1, 2, 2, 3, 3]) == 2
    assert consensus([0, 3], final=3) == 3 and consensus([]) is None


def test_pairwise_kappa_matches_scikit_learn_and_undefined_cases_say_why():
    a = [0, 1, 2, 3, 3, 2, 1, 0, 2, 3]
    b = [0, 1, 2, 2, 3, 2, 0, 0, 3, 3]
    judged = {("q", f"s{i}"): {"ann": x, "bob": y} for i, (x, y) in enumerate(zip(a, b))}
    judged[("q", "only-ann")] = {"ann": 2}
    [pair] = pairwise(judged)
    assert pair.n == 10 and pair.value == pytest.approx(cohen_kappa_score(a, b, weights="linear"))
    assert pair.low < pair.value < pair.high and pair.exact == pytest.approx(0.7)
    assert kappas(np.array(a), np.array(b), np.arange(10)[None, :])[0] == pytest.approx(pair.value)  # bootstrap's
    [same] = pairwise({("q", "s1"): {"ann": 2, "bob": 2}, ("q", "s2"): {"ann": 2, "bob": 2}})
    assert same.value is None and "same grade" in same.why
    assert fleiss(judged) is None and alpha(judged) is None  # two annotators: Cohen only


def test_fleiss_and_krippendorff_for_three_annotators():
    rows = [(0, 0, 1), (3, 3, 3), (2, 2, 3), (1, 0, 2), (3, 2, 3), (0, 0, 0)]
    judged = {("q", f"s{i}"): dict(zip(("ann", "bob", "cy"), r)) for i, r in enumerate(rows)}
    judged[("q", "partial")] = {"ann": 3, "bob": 0}
    f, k = fleiss(judged), alpha(judged)
    assert f.n == 6 and 0.3 < f.value < 1  # only items every annotator judged
    assert k.n == 7 and 0.5 < k.value < 1  # every item two or more judged
    assert len(pairwise(judged)) == 3
    gaps = disagreements(judged)  # 2 or more apart, or split on relevance (2+ against below 2); widest first
    assert [(d.item[1], d.first, d.second, d.gap, d.split) for d in gaps] == [
        ("partial", "ann", "bob", 3, True),
        ("s3", "bob", "cy", 2, True),
        ("s3", "ann", "cy", 1, True),
    ]


def test_metrics_per_run_from_pooled_labels(store):
    save_run(store, "medrag", [hit("a"), hit("b"), hit("c"), hit("d")])
    save_run(store, "sema", [hit("c"), hit("x")], generated=["Generated key fact."])
    [q] = collect(store.path)
    labels = LabelStore(store.path)
    for sid, grade in {"a": 0, "b": 3, "c": 2, "d": 1, generated_id("Generated key fact."): 3}.items():
        labels.set_label(q.ref, sid, "ann", grade)
    rows = {r["method"]: r for r in run_metrics(collect(store.path), labels.labels(), labels.finals())}
    medrag, sema = rows["medrag"], rows["sema"]
    assert medrag["P@5"] == pytest.approx(2 / 5) and medrag["MRR"] == pytest.approx(1 / 2)
    ideal = 3 + 3 / math.log2(3) + 2 / math.log2(4) + 1 / math.log2(5)
    got = 0 + 3 / math.log2(3) + 2 / math.log2(4) + 1 / math.log2(5)
    assert medrag["nDCG@10"] == pytest.approx(got / ideal)  # gains are the grades; the ideal uses every judged one
    assert sema["judged_share"] == pytest.approx(0.5) and sema["MRR"] == 1.0  # x is unjudged: not relevant
    strict = {
        r["method"]: r
        for r in run_metrics(collect(store.path), labels.labels(), [], MetricSettings(relevant=3, generated=True))
    }
    assert strict["sema"]["P@5"] == pytest.approx(1 / 5) and strict["sema"]["list_length"] == 3


def test_method_summary_intervals_and_paired_comparison():
    rows = [
        {"method": m, "question_id": f"q{i}", "P@5": v}
        for m, values in (("medrag", [0.2, 0.4, 0.4, 0.6]), ("sema", [0.6, 0.8, 0.8, 1.0]))
        for i, v in enumerate(values)
    ]
    summary = {s["method"]: s for s in summarize(rows, ["P@5"])}
    assert summary["medrag"]["mean"] == pytest.approx(0.4) and summary["medrag"]["n_questions"] == 4
    assert 0 <= summary["medrag"]["low"] < 0.4 < summary["medrag"]["high"] and summary["sema"]["high"] <= 1
    [pair] = compare_methods(rows, "P@5")
    assert pair["mean_difference"] == pytest.approx(-0.4) and pair["verdict"] == "sema higher"
    noisy = rows[:4] + [{"method": "sema", "question_id": f"q{i}", "P@5": v} for i, v in enumerate([0, 0.8, 0.2, 1])]
    assert compare_methods(noisy, "P@5")[0]["verdict"] == "cannot separate"


def test_progress_counts_my_judgments_and_snippets_at_the_target(store):
    save_run(store, "medrag", [hit("a"), hit("b")])
    [q] = collect(store.path)
    labels = LabelStore(store.path)
    labels.set_label(q.ref, "a", "ann", 2)
    labels.set_label(q.ref, "b", "ann", 0)
    labels.set_label(q.ref, "a", "bob", 3)
    mine = progress([q], labels.labels(), "ann")
    assert (mine.judged, mine.pool, mine.questions_done, mine.at_target) == (2, 2, 1, 1)
    assert progress([q], labels.labels(), "bob").questions_done == 0


def test_a_write_waits_and_retries_while_another_holds_the_lock_and_says_so_when_it_never_frees(
    store, tmp_path, monkeypatch
):
    import sqlite3
    import time
    from types import SimpleNamespace

    from core.studio.labels import LabelStoreBusy

    save_run(store, "medrag", [hit("s1")])
    [q] = collect(store.path)
    patient = LabelStore(store.path, busy_timeout=0.05, attempts=8)
    holder = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
    backoffs: list[float] = []

    def back_off(seconds: float) -> None:  # the other writer lets go during the second wait
        backoffs.append(seconds)
        if len(backoffs) == 2:
            holder.rollback()

    monkeypatch.setattr("core.studio.labels.store.time", SimpleNamespace(sleep=back_off, time=time.time))
    assert patient.set_label(q.ref, "s1", "ann", 2).new == 1  # retried until the lock was free
    assert len(backoffs) == 2 and backoffs[1] > backoffs[0] / 2  # two tries failed, each followed by a longer wait
    holder.execute("BEGIN IMMEDIATE")
    hasty = LabelStore(store.path, busy_timeout=0.01, attempts=2)
    with pytest.raises(LabelStoreBusy, match="stayed busy through 2 attempts.*nothing was saved"):
        hasty.set_label(q.ref, "s1", "ann", 3)
    holder.rollback()
    assert [r.grade for r in patient.labels()] == [2]
